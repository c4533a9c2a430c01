// Command web serves the read-only console and the push and image webhook
// receiver.
package main

import "github.com/kuvryn/kuvryn-sync/pkg/manager"

func main() {
	manager.Main(manager.Service{Name: "web"}, nil)
}
