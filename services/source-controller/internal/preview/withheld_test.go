package preview

import (
	"fmt"
	"strings"
	"testing"
)

func TestWithheld_BoundedAsTheSchemaIs(t *testing.T) {
	many := make([]string, 25)
	for i := range many {
		many[i] = fmt.Sprintf("file-%d.enc.yaml: SOPS-encrypted, not decrypted", i)
	}
	for _, tc := range []struct {
		name      string
		in        []string
		wantLen   int
		wantLast  string
		wantBytes int
	}{
		{"none", nil, 0, "", 0},
		{"a few kept as they are", many[:3], 3, many[2], 0},
		{"twenty kept", many[:20], 20, many[19], 0},
		{"more than twenty end with a count", many, 20, "and 6 more", 0},
		{"a long entry is cut", []string{strings.Repeat("x", 2000)}, 1, "", maxWithheldBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := boundWithheld(tc.in)
			if len(got) != tc.wantLen {
				t.Fatalf("%d entries, want %d", len(got), tc.wantLen)
			}
			if tc.wantLast != "" && got[len(got)-1] != tc.wantLast {
				t.Errorf("last entry %q, want %q", got[len(got)-1], tc.wantLast)
			}
			for _, w := range got {
				if len(w) > maxWithheldBytes || tc.wantBytes > 0 && len(w) < tc.wantBytes/2 {
					t.Errorf("entry of %d bytes", len(w))
				}
			}
		})
	}
}
