//go:build !unix

package peer

import "syscall"

// setReadBuffer is a no-op where the socket option is not portable: the
// receive buffer keeps the system's size.
func setReadBuffer(int) func(network, address string, c syscall.RawConn) error {
	return nil
}
