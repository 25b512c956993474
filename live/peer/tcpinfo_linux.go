package peer

import "golang.org/x/sys/unix"

// bytesReceived returns the socket's TCP_INFO bytes_received: every byte of
// payload the kernel has accepted in order, read by the application or not.
func bytesReceived(fd uintptr) (int64, error) {
	info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0, err
	}
	return int64(info.Bytes_received), nil
}
