package harness

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// LoopbackSource is the i-th sender address of a test that must look like
// many remote hosts: 127.0.0.2 for i = 0, up to 127.0.0.254. Linux routes
// all of 127/8 to lo, so each is a distinct remote address to a server on
// 127.0.0.1 without any setup; 127.0.0.1 itself stays for ordinary clients.
func LoopbackSource(i int) (net.IP, error) {
	if i < 0 || i > 252 {
		return nil, fmt.Errorf("loopback source %d out of range 0..252", i)
	}
	return net.IPv4(127, 0, 0, byte(2+i)), nil
}

// ClientFrom is an HTTP client whose connections all leave from the
// loopback address src, keeping up to conns of them idle for reuse.
func ClientFrom(src net.IP, conns int, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: timeout}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:         dialer.DialContext,
			MaxIdleConnsPerHost: conns,
			// No proxy from the environment: the request must leave from src.
			Proxy: nil,
		},
	}
}
