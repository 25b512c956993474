package doppler

import (
	"bytes"
	"errors"
	"testing"
)

// patterned returns a frame of n elements of type typ whose payload bytes
// count up, so a misplaced chunk shows.
func patterned(t testing.TB, typ Type, o Order, n int, seq uint64) Frame {
	t.Helper()
	p := make([]byte, n*typ.ElemSize())
	for i := range p {
		p[i] = byte(i*7 + i>>8)
	}
	f, err := NewFrame(typ, o, p)
	if err != nil {
		t.Fatal(err)
	}
	f.Header.Sequence = seq
	f.Header.TimestampNs = 42
	return f
}

// chunks splits f at maxPayload and fails the test if it is not chunked.
func chunks(t testing.TB, f Frame, maxPayload int, o Order) [][]byte {
	t.Helper()
	msgs, err := Chunk(f, maxPayload, o)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// outcome is what a run of messages did to a Reassembler.
type outcome struct {
	delivered []Frame
	errs      []error
}

func feed(r *Reassembler, msgs ...[]byte) outcome {
	var out outcome
	for _, m := range msgs {
		f, ok, err := r.Add(m)
		if ok {
			out.delivered = append(out.delivered, f)
		}
		if err != nil {
			out.errs = append(out.errs, err)
		}
	}
	return out
}

// wantFrame checks a delivered frame is f as a subscriber must see it
// (doppler §4): totals in the header, CHUNKED clear, the payload intact.
func wantFrame(t *testing.T, got, f Frame) {
	t.Helper()
	if got.Header.Chunked() {
		t.Error("delivered frame has CHUNKED set")
	}
	if got.Header != f.Header {
		t.Errorf("delivered header %+v, want %+v", got.Header, f.Header)
	}
	if !bytes.Equal(got.Payload, f.Payload) {
		t.Errorf("delivered payload differs (%d bytes, want %d)", len(got.Payload), len(f.Payload))
	}
}

func wantInvalid(t *testing.T, errs []error, n int) {
	t.Helper()
	if len(errs) != n {
		t.Fatalf("%d errors %v, want %d", len(errs), errs, n)
	}
	for _, err := range errs {
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%v is not DP_ERR_INVALID", err)
		}
	}
}

// TestChunkSequences covers the chunk sequences doppler §4 names, with a
// 4-chunk CF32 frame (max_payload 1000 carries 912-byte chunks).
func TestChunkSequences(t *testing.T) {
	const maxPayload = 1000
	for _, o := range []Order{LittleEndian, BigEndian} {
		f := patterned(t, TypeCF32, o, 400, 7) // 3200 bytes: 912+912+912+464
		m := chunks(t, f, maxPayload, o)
		if len(m) != 4 {
			t.Fatalf("%d chunks, want 4", len(m))
		}
		next := patterned(t, TypeCF32, o, 400, 8)
		mNext := chunks(t, next, maxPayload, o)
		other := patterned(t, TypeCF32, o, 400, 900) // another publisher's count
		mOther := chunks(t, other, maxPayload, o)
		whole := patterned(t, TypeCF32, o, 3, 1)
		mWhole := whole.AppendMessage(nil, o)

		t.Run(o.String()+"/in order", func(t *testing.T) {
			out := feed(&Reassembler{Order: o}, m...)
			wantInvalid(t, out.errs, 0)
			if len(out.delivered) != 1 {
				t.Fatalf("%d frames delivered, want 1", len(out.delivered))
			}
			wantFrame(t, out.delivered[0], f)
		})
		t.Run(o.String()+"/reordered", func(t *testing.T) {
			for _, perm := range [][]int{{3, 2, 1, 0}, {1, 3, 0, 2}, {0, 3, 1, 2}} {
				var in [][]byte
				for _, i := range perm {
					in = append(in, m[i])
				}
				out := feed(&Reassembler{Order: o}, in...)
				wantInvalid(t, out.errs, 0)
				if len(out.delivered) != 1 {
					t.Fatalf("%v: %d frames delivered, want 1", perm, len(out.delivered))
				}
				wantFrame(t, out.delivered[0], f)
			}
		})
		t.Run(o.String()+"/duplicated index is a no-op", func(t *testing.T) {
			out := feed(&Reassembler{Order: o}, m[0], m[1], m[1], m[0], m[2], m[3], m[3], m[2])
			wantInvalid(t, out.errs, 0)
			if len(out.delivered) != 1 {
				t.Fatalf("%d frames delivered, want 1", len(out.delivered))
			}
			wantFrame(t, out.delivered[0], f)
		})
		t.Run(o.String()+"/missing chunk loses its frame only", func(t *testing.T) {
			r := &Reassembler{Order: o}
			out := feed(r, m[0], m[1], m[3]) // chunk 2 lost
			if len(out.delivered) != 0 || len(out.errs) != 0 {
				t.Fatalf("an incomplete frame: %d delivered, errors %v", len(out.delivered), out.errs)
			}
			out = feed(r, mNext...)
			wantInvalid(t, out.errs, 1)
			if len(out.delivered) != 1 {
				t.Fatalf("%d frames delivered, want the next frame", len(out.delivered))
			}
			wantFrame(t, out.delivered[0], next)
			if err := feed(r, m[0], m[1]).errs; len(err) != 0 {
				t.Fatal(err)
			}
			if err := r.Abandon(); !errors.Is(err, ErrInvalid) {
				t.Errorf("Abandon: %v, want DP_ERR_INVALID", err)
			}
			if _, ok := r.Pending(); ok || r.Buffered() != 0 {
				t.Error("Abandon kept the frame")
			}
		})
		t.Run(o.String()+"/interleaved publisher drops the frame", func(t *testing.T) {
			r := &Reassembler{Order: o}
			out := feed(r, m[0], m[1], mOther[0])
			wantInvalid(t, out.errs, 1)
			if seq, ok := r.Pending(); !ok || seq != 900 {
				t.Errorf("the interrupting chunk did not open its own frame: %d %v", seq, ok)
			}
			out = feed(r, m[2], m[3])
			wantInvalid(t, out.errs, 1) // frame 900 dropped in its turn
			if len(out.delivered) != 0 {
				t.Error("a frame missing chunks was delivered")
			}
		})
		t.Run(o.String()+"/unchunked message mid-frame", func(t *testing.T) {
			out := feed(&Reassembler{Order: o}, m[0], mWhole, m[1], m[2], m[3])
			// the frame is dropped and the whole message still delivered;
			// chunks 1–3 then open a frame that can never complete.
			wantInvalid(t, out.errs, 1)
			if len(out.delivered) != 1 {
				t.Fatalf("%d delivered, want the unchunked frame", len(out.delivered))
			}
			wantFrame(t, out.delivered[0], whole)
		})
		t.Run(o.String()+"/count disagreement", func(t *testing.T) {
			bad := append([]byte(nil), m[2]...)
			o.putU32(bad[HeaderSize+offChunkCount:], 5)
			r := &Reassembler{Order: o}
			out := feed(r, m[0], m[1], bad, m[3])
			wantInvalid(t, out.errs, 1)
			if len(out.delivered) != 0 {
				t.Error("a frame with a disagreeing chunk was delivered")
			}
		})
		t.Run(o.String()+"/chunk failing the header check", func(t *testing.T) {
			bad := append([]byte(nil), m[2]...)
			o.putU64(bad[offPayloadBytes:], 1) // check 4
			out := feed(&Reassembler{Order: o}, m[0], m[1], bad, m[3])
			wantInvalid(t, out.errs, 1)
			var e *Error
			if !errors.As(out.errs[0], &e) || e.Verdict != PayloadMismatch {
				t.Errorf("%v does not name the verdict", out.errs[0])
			}
			if len(out.delivered) != 0 {
				t.Error("a frame with a refused chunk was delivered")
			}
		})
		t.Run(o.String()+"/late repeat after delivery", func(t *testing.T) {
			out := feed(&Reassembler{Order: o}, append(append([][]byte{}, m...), m[3], m[0])...)
			wantInvalid(t, out.errs, 0)
			if len(out.delivered) != 1 {
				t.Fatalf("%d delivered, want 1", len(out.delivered))
			}
		})
		t.Run(o.String()+"/back-to-back frames", func(t *testing.T) {
			out := feed(&Reassembler{Order: o}, append(append([][]byte{mWhole}, m...), mNext...)...)
			wantInvalid(t, out.errs, 0)
			if len(out.delivered) != 3 {
				t.Fatalf("%d delivered, want 3", len(out.delivered))
			}
			wantFrame(t, out.delivered[1], f)
			wantFrame(t, out.delivered[2], next)
		})
	}
}

// TestChunkRefusals: chunks whose block or geometry cannot belong to a frame
// split as the doppler pins (docs/requirements.md) says are refused.
func TestChunkRefusals(t *testing.T) {
	o := LittleEndian
	f := patterned(t, TypeCF32, o, 400, 7)
	m := chunks(t, f, 1000, o)
	edit := func(msg []byte, change func([]byte)) []byte {
		b := append([]byte(nil), msg...)
		change(b)
		return b
	}
	blk := HeaderSize
	for _, tc := range []struct {
		name string
		msgs [][]byte
		code Code
	}{
		{"chunk_count 0", [][]byte{edit(m[0], func(b []byte) { o.putU32(b[blk+offChunkCount:], 0) })}, ErrInvalid},
		{"chunk_index past chunk_count", [][]byte{edit(m[0], func(b []byte) { o.putU32(b[blk+offChunkIndex:], 4) })}, ErrInvalid},
		{"totals disagree with each other", [][]byte{edit(m[0], func(b []byte) { o.putU64(b[blk+offTotalSamples:], 401) })}, ErrInvalid},
		{"total_bytes beyond what the chunks can carry", [][]byte{edit(m[0], func(b []byte) {
			o.putU64(b[blk+offTotalSamples:], 1000)
			o.putU64(b[blk+offTotalBytes:], 8000)
		})}, ErrInvalid},
		{"a middle chunk of another size", [][]byte{m[0], func() []byte {
			// 456 bytes of chunk 1 with its header telling the truth about them
			b := edit(m[1][:HeaderSize+ChunkBlockSize+456], func(b []byte) {
				o.putU64(b[offNumSamples:], 57)
				o.putU64(b[offPayloadBytes:], 456)
			})
			return b
		}()}, ErrInvalid},
		{"total over the receiver's bound", [][]byte{edit(m[0], func(b []byte) {
			o.putU64(b[blk+offTotalSamples:], 1<<40)
			o.putU64(b[blk+offTotalBytes:], 8<<40)
			o.putU32(b[blk+offChunkCount:], 1<<31)
		})}, ErrNoMem},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := feed(&Reassembler{Order: o}, tc.msgs...)
			if len(out.delivered) != 0 || len(out.errs) != 1 || !errors.Is(out.errs[0], tc.code) {
				t.Errorf("delivered %d, errors %v, want one %v", len(out.delivered), out.errs, tc.code)
			}
		})
	}
}

// TestReassemblyMemoryFollowsArrival: a chunk block claiming a huge frame
// allocates nothing beyond the eager bound, and a last chunk arriving first
// waits on its own rather than sizing the buffer from the claim.
func TestReassemblyMemoryFollowsArrival(t *testing.T) {
	o := LittleEndian
	f := patterned(t, TypeCF64, o, 10_000, 1) // 160 000 bytes
	m := chunks(t, f, 2048, o)                // 122 chunks of 1952 bytes
	r := &Reassembler{Order: o, EagerBytes: 4096}
	var arrived int
	for i := len(m) - 1; i >= 0; i-- { // backwards: every chunk lands beyond what has arrived
		_, ok, err := r.Add(m[i])
		if err != nil {
			t.Fatal(err)
		}
		arrived += len(m[i]) - HeaderSize - ChunkBlockSize
		if bound := 4096 + 3*arrived; r.Buffered() > bound && !ok {
			t.Fatalf("after %d bytes arrived %d are held, bound %d", arrived, r.Buffered(), bound)
		}
		if ok != (i == 0) {
			t.Fatalf("chunk %d: delivered %v", i, ok)
		}
	}

	claim := append([]byte(nil), m[0]...)
	o.putU64(claim[HeaderSize+offTotalSamples:], 1<<24)
	o.putU64(claim[HeaderSize+offTotalBytes:], 16<<24)
	o.putU32(claim[HeaderSize+offChunkCount:], 1<<24*16/1952+1)
	r = &Reassembler{Order: o, EagerBytes: 4096}
	if _, _, err := r.Add(claim); err != nil {
		t.Fatal(err)
	}
	if r.Buffered() > 4096 {
		t.Errorf("a 256 MiB claim made the receiver hold %d bytes after one chunk", r.Buffered())
	}
}

// TestReassemblyCopiesOnce: the 1.6 MB CF64 frame of doppler §4 at the 1 MiB
// default max_payload is assembled in one allocation of its own size.
func TestReassemblyCopiesOnce(t *testing.T) {
	o := LittleEndian
	f := patterned(t, TypeCF64, o, 100_000, 1)
	m := chunks(t, f, DefaultMaxPayload, o)
	if len(m) != 2 {
		t.Fatalf("%d chunks, want 2", len(m))
	}
	var r Reassembler
	allocs := testing.AllocsPerRun(5, func() {
		r = Reassembler{} // the same frame again would be a late repeat
		r.Add(m[0])
		if _, ok, err := r.Add(m[1]); !ok || err != nil {
			t.Fatal("not delivered", err)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations per frame, want 1 (the frame buffer)", allocs)
	}
}

// TestReplacedCheck: a Reassembler judges by its Check when one is set, and
// refuses what a lenient Check accepts but no receiver can read, rather
// than reading outside the message.
func TestReplacedCheck(t *testing.T) {
	acceptAll := func([]byte, Order) Verdict { return Accepted }
	refuseAll := func([]byte, Order) Verdict { return UnknownFlags }

	good := patterned(t, TypeCI16, LittleEndian, 4, 3).AppendMessage(nil, LittleEndian)
	r := &Reassembler{Check: refuseAll}
	_, ok, err := r.Add(good)
	var refused *Error
	if ok || !errors.As(err, &refused) || refused.Verdict != UnknownFlags {
		t.Fatalf("a Check that refuses everything: ok %v, err %v; want refused %v", ok, err, UnknownFlags)
	}

	chunkedShort := patterned(t, TypeCI16, LittleEndian, 4, 3)
	chunkedShort.Header.Flags = FlagChunked
	unknownFormat := patterned(t, TypeCI16, LittleEndian, 4, 3)
	unknownFormat.Header.Format = Format(0x5858)
	for _, tc := range []struct {
		name string
		msg  []byte
		want Verdict
	}{
		{"shorter than a header", good[:10], ShortMessage},
		{"CHUNKED without room for the chunk block", chunkedShort.AppendMessage(nil, LittleEndian)[:HeaderSize+8], ShortChunkBlock},
		{"a format with no element size", unknownFormat.AppendMessage(nil, LittleEndian), UnknownFormat},
	} {
		r := &Reassembler{Check: acceptAll}
		_, ok, err := r.Add(tc.msg)
		var e *Error
		if ok || !errors.As(err, &e) || e.Verdict != tc.want {
			t.Errorf("%s accepted by a lenient Check: ok %v, err %v; want refused %v", tc.name, ok, err, tc.want)
		}
	}
	r = &Reassembler{Check: acceptAll}
	if f, ok, err := r.Add(good); !ok || err != nil || !bytes.Equal(f.Payload, good[HeaderSize:]) {
		t.Errorf("a conforming frame through a lenient Check: ok %v, err %v", ok, err)
	}
}
