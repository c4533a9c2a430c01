package controlplane

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePort_IsBelowTheEphemeralRangeAndNeverHandedOutTwice: outgoing
// connections take their local ports from the ephemeral range, so a port
// from it may be taken before the process told of it listens; and two
// processes of one test must never be told the same port.
func TestFreePort_IsBelowTheEphemeralRangeAndNeverHandedOutTwice(t *testing.T) {
	first, ok := ephemeralStart()
	if !ok || first <= lowestPort {
		t.Skipf("no ephemeral range to stay below (%d)", first)
	}
	seen := map[int]bool{}
	for range 200 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < lowestPort || port >= first {
			t.Fatalf("FreePort() = %d, want within [%d, %d)", port, lowestPort, first)
		}
		if seen[port] {
			t.Fatalf("FreePort() returned %d twice", port)
		}
		seen[port] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("listening on the port FreePort returned: %v", err)
		}
		l.Close()
	}
}
