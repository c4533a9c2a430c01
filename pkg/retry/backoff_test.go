package retry

import (
	"testing"
	"time"
)

func TestBackoff_DoublesUpToTheCapAndResetsOnSuccess(t *testing.T) {
	cases := []struct {
		name    string
		initial time.Duration
		max     time.Duration
		// steps: "f" is a failure, "s" a success; want holds the delay of each failure.
		steps string
		want  []time.Duration
	}{
		{"doubles from the default", 0, time.Hour, "ffff",
			[]time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}},
		{"capped at the poll interval", 5 * time.Second, 30 * time.Second, "fffff",
			[]time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}},
		{"a cap below the first delay wins", 5 * time.Second, 2 * time.Second, "ff",
			[]time.Duration{2 * time.Second, 2 * time.Second}},
		{"success resets", time.Second, time.Minute, "fffsf",
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, time.Second}},
		{"many failures stay at the cap", time.Second, time.Hour, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := &Backoff{Initial: tc.initial}
			var got []time.Duration
			for _, s := range tc.steps {
				if s == 's' {
					b.Succeeded("ns/repo")
					continue
				}
				got = append(got, b.Failed("ns/repo", tc.max))
			}
			if tc.want == nil {
				if last := got[len(got)-1]; last != tc.max {
					t.Fatalf("after %d failures the delay is %s, want the cap %s", len(got), last, tc.max)
				}
				return
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
			if other := b.Failed("ns/other", tc.max); other != min(b.initial(), tc.max) {
				t.Fatalf("another key's first delay is %s, want %s", other, min(b.initial(), tc.max))
			}
		})
	}
}
