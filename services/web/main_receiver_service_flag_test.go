package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestReceiverServiceFlag_IsANameInThePodsNamespaceOrNamespaceSlashName:
// a bare name is the receiver's Service in the Pod's own namespace, so it
// follows a kustomize namespace override; namespace/name is taken as is;
// anything else is refused naming the flag.
func TestReceiverServiceFlag_IsANameInThePodsNamespaceOrNamespaceSlashName(t *testing.T) {
	tests := []struct {
		flag    string
		want    types.NamespacedName
		wantErr bool
	}{
		{flag: "kuvryn-sync-receiver", want: types.NamespacedName{Namespace: "ops", Name: "kuvryn-sync-receiver"}},
		{flag: "edge/receiver", want: types.NamespacedName{Namespace: "edge", Name: "receiver"}},
		{flag: "", wantErr: true},
		{flag: "edge/", wantErr: true},
		{flag: "/receiver", wantErr: true},
		{flag: "a/b/c", wantErr: true},
	}
	for _, tt := range tests {
		got, err := receiverService(tt.flag, "ops")
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "--webhook-receiver-service") {
				t.Errorf("%q: error %v, want one naming --webhook-receiver-service", tt.flag, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: %v, %v; want %v", tt.flag, got, err, tt.want)
		}
	}
}
