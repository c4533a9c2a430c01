package revision

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestHookWaves_SplitsHooksIntoRunsOfOneWave(t *testing.T) {
	h := func(name, wave string) *unstructured.Unstructured {
		return object(t, fmt.Sprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  annotations: {sync.kuvryn.io/sync-wave: %q}\n", name, wave))
	}
	groups := hookWaves([]*unstructured.Unstructured{h("a", "-1"), h("b", "0"), h("c", "0"), h("d", "3")})
	var got []string
	for _, g := range groups {
		var names []string
		for _, obj := range g {
			names = append(names, obj.GetName())
		}
		got = append(got, strings.Join(names, "+"))
	}
	if want := "a|b+c|d"; strings.Join(got, "|") != want {
		t.Errorf("hookWaves() = %v, want %s", got, want)
	}
}
