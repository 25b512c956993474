//go:build unix

package peer

import "syscall"

// setReadBuffer returns a dial-time control function that sets the socket's
// receive buffer to n bytes before the connection is made, so that the
// window the kernel advertises is small from the first segment. Shrinking it
// after the connection is up can strand data the far end already sent.
func setReadBuffer(n int) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
		})
		if err != nil {
			return err
		}
		return serr
	}
}
