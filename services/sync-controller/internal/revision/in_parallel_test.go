package revision

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

func TestInParallel_AtMostObjectsAtOnceAndErrorsByIndex(t *testing.T) {
	const n = 3*planner.ObjectsAtOnce + 2
	var inFlight, most atomic.Int32
	full := make(chan struct{})
	var fullOnce sync.Once
	errs := planner.InParallel(n, func(i int) error {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		if now == planner.ObjectsAtOnce {
			fullOnce.Do(func() { close(full) })
		}
		if i < planner.ObjectsAtOnce {
			// The first calls wait for each other: they must all run at once.
			select {
			case <-full:
			case <-time.After(time.Minute):
				t.Errorf("call %d: the first %d calls never ran at once", i, planner.ObjectsAtOnce)
			}
		}
		if i%5 == 3 {
			return fmt.Errorf("object %d", i)
		}
		return nil
	})
	if got := most.Load(); got != planner.ObjectsAtOnce {
		t.Errorf("at most %d calls ran at once, want %d", got, planner.ObjectsAtOnce)
	}
	for i, err := range errs {
		if want := i%5 == 3; (err != nil) != want || (want && err.Error() != fmt.Sprintf("object %d", i)) {
			t.Errorf("errs[%d] = %v", i, err)
		}
	}
	if i, err := planner.FirstError(errs); i != 3 || err == nil {
		t.Errorf("firstError = %d, %v; want 3, object 3", i, err)
	}
}

func TestFirstError_NoneIsMinusOne(t *testing.T) {
	if i, err := planner.FirstError([]error{nil, nil}); i != -1 || err != nil {
		t.Errorf("firstError = %d, %v; want -1, nil", i, err)
	}
	if i, err := planner.FirstError([]error{nil, errors.New("b"), errors.New("c")}); i != 1 || err.Error() != "b" {
		t.Errorf("firstError = %d, %v; want 1, b", i, err)
	}
}

func TestByKind_RunsOfOneKindOrderInOrder(t *testing.T) {
	obj := func(apiVersion, kind, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName(name)
		return u
	}
	names := func(runs [][]*unstructured.Unstructured) string {
		s := ""
		for _, run := range runs {
			s += "["
			for i, o := range run {
				if i > 0 {
					s += " "
				}
				s += o.GetName()
			}
			s += "]"
		}
		return s
	}
	tests := []struct {
		name string
		objs []*unstructured.Unstructured
		want string
	}{
		{"none", nil, ""},
		{"one", []*unstructured.Unstructured{obj("v1", "ConfigMap", "a")}, "[a]"},
		{"a run per kind", []*unstructured.Unstructured{
			obj("v1", "ServiceAccount", "sa"), obj("v1", "ConfigMap", "a"), obj("v1", "ConfigMap", "b"),
			obj("v1", "Service", "svc"), obj("apps/v1", "Deployment", "d1"), obj("apps/v1", "Deployment", "d2"),
		}, "[sa][a b][svc][d1 d2]"},
		{"a Role and its RoleBinding apart", []*unstructured.Unstructured{
			obj("rbac.authorization.k8s.io/v1", "Role", "r"), obj("rbac.authorization.k8s.io/v1", "RoleBinding", "rb"),
		}, "[r][rb]"},
		{"custom resources share the last kind order", []*unstructured.Unstructured{
			obj("apps/v1", "Deployment", "d"), obj("example.com/v1", "Widget", "w"), obj("example.com/v1", "Gadget", "g"),
		}, "[d][w g]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(byKind(tt.objs)); got != tt.want {
				t.Errorf("byKind = %s, want %s", got, tt.want)
			}
		})
	}
}
