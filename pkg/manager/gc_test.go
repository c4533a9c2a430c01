package manager

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC_HalvesGoDefaultUnlessGOGCIsSet(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	tests := []struct {
		name string
		env  map[string]string
		// before is the target the runtime had from GOGC at start.
		before, want int
	}{
		{"GOGC unset", nil, 100, gcPercent},
		{"GOGC set", map[string]string{"GOGC": "200"}, 200, 200},
		{"GOGC off", map[string]string{"GOGC": "off"}, -1, -1},
		{"only GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "100MiB"}, 100, gcPercent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(tt.before)
			tuneGC(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if inForce := debug.SetGCPercent(100); inForce != tt.want {
				t.Errorf("GC target in force = %d, want %d", inForce, tt.want)
			}
		})
	}
}
