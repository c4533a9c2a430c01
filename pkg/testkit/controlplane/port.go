package controlplane

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Ports below lowestPort are left to the system's own services.
const lowestPort = 10000

// handedOut are the ports FreePort returned in this process.
var handedOut struct {
	mu    sync.Mutex
	ports map[int]bool
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that it has not returned before. It picks one below the kernel's
// ephemeral range when it can: a port the kernel hands out for ":0" is one
// it also gives outgoing connections, so a client of the control plane
// could take it before the process told to listen on it does, and that
// process then fails to start (a service's manager binds its probe address
// as it is created).
func FreePort() (int, error) {
	handedOut.mu.Lock()
	defer handedOut.mu.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	if first, ok := ephemeralStart(); ok && first > lowestPort {
		for range 100 {
			port := lowestPort + rand.IntN(first-lowestPort)
			if handedOut.ports[port] || !free(port) {
				continue
			}
			handedOut.ports[port] = true
			return port, nil
		}
	}
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port on 127.0.0.1 that was not handed out already")
}

// free tells whether port can be listened on at 127.0.0.1 now.
func free(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ephemeralStart is the first port of the kernel's ephemeral range.
func ephemeralStart() (int, bool) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return 0, false
	}
	first, err := strconv.Atoi(f[0])
	return first, err == nil
}
