// Command notify-controller delivers Application lifecycle events to
// NotificationSinks.
package main

import "github.com/kuvryn/kuvryn-sync/pkg/manager"

func main() {
	manager.Main(manager.Service{Name: "notify-controller"}, nil)
}
