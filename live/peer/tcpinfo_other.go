//go:build !linux

package peer

import "errors"

// bytesReceived is unknown off Linux: no portable socket option counts the
// bytes a connection has received.
func bytesReceived(uintptr) (int64, error) {
	return 0, errors.New("the bytes a connection received are not known on this system")
}
