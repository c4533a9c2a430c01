package impersonate

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

func TestUserName_IsTheServiceAccountsUser(t *testing.T) {
	got := UserName(types.NamespacedName{Namespace: "payments", Name: "deployer"})
	if want := "system:serviceaccount:payments:deployer"; got != want {
		t.Errorf("UserName() = %q, want %q", got, want)
	}
}

func TestClients_KeepOneClientPerServiceAccount(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"}
	clients := NewClients(cfg, runtime.NewScheme(), meta.NewDefaultRESTMapper(nil))
	a := types.NamespacedName{Namespace: "payments", Name: "deployer"}
	b := types.NamespacedName{Namespace: "shipping", Name: "deployer"}

	first, err := clients.For(a)
	if err != nil {
		t.Fatalf("For(%s) error = %v", a, err)
	}
	again, err := clients.For(a)
	if err != nil {
		t.Fatalf("For(%s) error = %v", a, err)
	}
	other, err := clients.For(b)
	if err != nil {
		t.Fatalf("For(%s) error = %v", b, err)
	}
	if first != again {
		t.Error("For() built a second client for the same service account")
	}
	if first == other {
		t.Error("For() shared a client between service accounts of different namespaces")
	}
	if cfg.Impersonate.UserName != "" {
		t.Errorf("For() changed the controller's own config: impersonates %q", cfg.Impersonate.UserName)
	}
}
