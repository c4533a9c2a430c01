// Command sync-controller plans Revisions, guards approvals with its
// admission webhook, rolls out hooks and waves, prunes, and watches health
// and drift.
package main

import "github.com/kuvryn/kuvryn-sync/pkg/manager"

func main() {
	manager.Main(manager.Service{Name: "sync-controller"}, nil)
}
