package receiver

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// endpointSlices decodes data, three bytes an endpoint, into up to four
// EndpointSlices: the slice, the Pod (and its address), and whether the
// endpoint is ready (unset, true, false), names its Pod, has an address
// and a second one.
func endpointSlices(data []byte) []discoveryv1.EndpointSlice {
	out := make([]discoveryv1.EndpointSlice, 4)
	for i := 0; i+2 < len(data); i += 3 {
		pod, flags := data[i+1], data[i+2]
		var e discoveryv1.Endpoint
		switch flags % 3 {
		case 1:
			e.Conditions.Ready = isReady(true)
		case 2:
			e.Conditions.Ready = isReady(false)
		}
		if flags&4 != 0 {
			e.TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: "kuvryn-sync-system", Name: fmt.Sprintf("web-%d", pod%16)}
		}
		if flags&8 != 0 {
			e.Addresses = append(e.Addresses, fmt.Sprintf("10.0.0.%d", pod))
		}
		if flags&16 != 0 {
			e.Addresses = append(e.Addresses, fmt.Sprintf("fd00::%x", pod))
		}
		s := &out[data[i]%4]
		s.Endpoints = append(s.Endpoints, e)
	}
	return out
}

// FuzzReadyEndpoints_CountsEachReadyPodOnce feeds the replica count
// EndpointSlices as the API server may hold them: whatever they are, the
// count is at most the endpoints not marked unready, does not depend on the
// order of slices or endpoints, does not change when every slice is
// repeated (a dual-stack Service's second address family) or an unready
// endpoint is added, and rises by one with a new ready Pod.
func FuzzReadyEndpoints_CountsEachReadyPodOnce(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 4, 0, 2, 5, 1, 1, 12})
	f.Add([]byte{0, 1, 2 | 4 | 8, 1, 1, 1 | 4 | 16, 2, 7, 8, 3, 7, 8 | 16})
	f.Add([]byte{0, 0, 0, 1, 0, 0, 2, 0, 24})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := endpointSlices(data)
		n := readyEndpoints(in)

		notUnready := 0
		for _, s := range in {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					notUnready++
				}
			}
		}
		if n < 0 || n > notUnready {
			t.Fatalf("count %d of %d endpoints not marked unready", n, notUnready)
		}

		reversed := make([]discoveryv1.EndpointSlice, len(in))
		for i, s := range in {
			s.Endpoints = slices.Clone(s.Endpoints)
			slices.Reverse(s.Endpoints)
			reversed[len(in)-1-i] = s
		}
		if r := readyEndpoints(reversed); r != n {
			t.Fatalf("count %d in reverse order, %d in order", r, n)
		}
		if d := readyEndpoints(append(slices.Clone(in), in...)); d != n {
			t.Fatalf("count %d with every slice twice, %d once", d, n)
		}

		extra := slices.Clone(in)
		extra = append(extra, discoveryv1.EndpointSlice{Endpoints: []discoveryv1.Endpoint{{
			Conditions: discoveryv1.EndpointConditions{Ready: isReady(false)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "kuvryn-sync-system", Name: "web-unready"},
			Addresses:  []string{"10.0.1.1"},
		}}})
		if u := readyEndpoints(extra); u != n {
			t.Fatalf("count %d with an unready endpoint added, %d without", u, n)
		}
		extra = append(extra, discoveryv1.EndpointSlice{Endpoints: []discoveryv1.Endpoint{{
			Conditions: discoveryv1.EndpointConditions{Ready: isReady(true)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "kuvryn-sync-system", Name: "web-new"},
			Addresses:  []string{"10.0.1.2"},
		}}})
		if a := readyEndpoints(extra); a != n+1 {
			t.Fatalf("count %d with a new ready Pod, want %d", a, n+1)
		}
	})
}

func isReady(b bool) *bool { return &b }
