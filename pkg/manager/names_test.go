package manager

import "testing"

func TestInstallName_FollowsTheGuide(t *testing.T) {
	cases := []struct{ service, want string }{
		{"sync-controller", "kuvryn-sync-controller-manager"},
		{"source-controller", "kuvryn-sync-source-controller"},
		{"image-controller", "kuvryn-sync-image-controller"},
		{"notify-controller", "kuvryn-sync-notify-controller"},
		{"web", "kuvryn-sync-web"},
	}
	for _, tc := range cases {
		t.Run(tc.service, func(t *testing.T) {
			if got := InstallName(tc.service); got != tc.want {
				t.Fatalf("InstallName(%q) = %q, want %q", tc.service, got, tc.want)
			}
		})
	}
}
