package message

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBound_CutsOnARuneBoundaryAndMarksTheCut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		limit int
		want  string
	}{
		{name: "short enough", in: "plan failed", limit: 20, want: "plan failed"},
		{name: "exactly the limit", in: "abcdef", limit: 6, want: "abcdef"},
		{name: "ascii cut", in: "abcdefghij", limit: 8, want: "abcde..."},
		{name: "never inside a rune", in: "ab" + strings.Repeat("é", 5), limit: 8, want: "abé..."},
		{name: "limit below the marker", in: "abcdef", limit: 2, want: "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Bound(tc.in, tc.limit)
			if got != tc.want || !utf8.ValidString(got) {
				t.Errorf("Bound(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
			}
		})
	}
}
