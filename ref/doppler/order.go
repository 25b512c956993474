package doppler

import "encoding/binary"

// Order is the byte order a doppler peer writes its header in. doppler writes
// the header in the sender's host order with no conversion (doppler §3), so a
// receiver has an order too: its own, in which it expects to read Magic.
type Order uint8

const (
	// LittleEndian is the order of x86-64 and of the corpus vectors.
	LittleEndian Order = iota
	// BigEndian is the order of a big-endian host.
	BigEndian
)

// NativeOrder returns the byte order of the machine running this code, which
// is the order a C doppler built here would write.
func NativeOrder() Order {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	if b[0] == 1 {
		return LittleEndian
	}
	return BigEndian
}

// Swap returns the other byte order.
func (o Order) Swap() Order {
	if o == BigEndian {
		return LittleEndian
	}
	return BigEndian
}

// String returns "little-endian" or "big-endian".
func (o Order) String() string {
	if o == BigEndian {
		return "big-endian"
	}
	return "little-endian"
}

// dataRep is the data_rep token a sender of this order writes.
func (o Order) dataRep() [4]byte {
	var d [4]byte
	if o == BigEndian {
		copy(d[:], dataRepBig)
	} else {
		copy(d[:], dataRepLittle)
	}
	return d
}

// The accessors below are small enough to inline; the header check is built
// from them and has a budget of a few nanoseconds.

func (o Order) u16(b []byte) uint16 {
	if o == BigEndian {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (o Order) u32(b []byte) uint32 {
	if o == BigEndian {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (o Order) u64(b []byte) uint64 {
	if o == BigEndian {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

func (o Order) putU16(b []byte, v uint16) {
	if o == BigEndian {
		binary.BigEndian.PutUint16(b, v)
		return
	}
	binary.LittleEndian.PutUint16(b, v)
}

func (o Order) putU32(b []byte, v uint32) {
	if o == BigEndian {
		binary.BigEndian.PutUint32(b, v)
		return
	}
	binary.LittleEndian.PutUint32(b, v)
}

func (o Order) putU64(b []byte, v uint64) {
	if o == BigEndian {
		binary.BigEndian.PutUint64(b, v)
		return
	}
	binary.LittleEndian.PutUint64(b, v)
}
