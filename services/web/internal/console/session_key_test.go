package console

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
)

// TestSessionKey_CreatedOnceThenReused: with the console's own rights, the
// key Secret is created when absent, the same key is read back after that
// (a restart, another replica), and a Secret with a wrong key is refused
// naming it.
func TestSessionKey_CreatedOnceThenReused(t *testing.T) {
	ctx := context.Background()
	web, err := client.New(cp.Impersonate(consoleUser), client.Options{Scheme: manager.Scheme()})
	must(t, err)
	key := types.NamespacedName{Namespace: "kuvryn-sync-system", Name: "console-key-" + strings.ToLower(t.Name()[len(t.Name())-6:])}

	first, err := SessionKey(ctx, web, web, key)
	must(t, err)
	if len(first) != KeySize || bytes.Equal(first, make([]byte, KeySize)) {
		t.Fatalf("key of %d bytes: %x", len(first), first)
	}
	again, err := SessionKey(ctx, web, web, key)
	must(t, err)
	if !bytes.Equal(first, again) {
		t.Error("a second start read another key")
	}
	var s corev1.Secret
	must(t, admin.Get(ctx, key, &s))
	if m := s.ManagedFields; len(m) == 0 || m[0].Manager != "kuvryn-web" {
		t.Errorf("Secret managed by %v, want kuvryn-web", m)
	}

	short := types.NamespacedName{Namespace: key.Namespace, Name: key.Name + "-short"}
	must(t, admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: short.Namespace, Name: short.Name},
		Data: map[string][]byte{SessionKeyField: []byte("short")}}))
	_, err = SessionKey(ctx, web, web, short)
	if err == nil || !strings.Contains(err.Error(), short.String()) || !strings.Contains(err.Error(), SessionKeyField) {
		t.Errorf("a 5-byte key: %v, want an error naming the Secret and its field", err)
	}
}
