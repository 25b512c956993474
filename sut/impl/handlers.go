package impl

import (
	"context"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// The handlers of conform.v1's ops, one function each, answering with an
// implementation's parts. A suite's descriptor (package suite) names the
// handlers of its ops; Impl.Handle finds them through Impl.Ops.

// ReadFrames answers the readFrames op (ranvier-wire §1.3, §2).
func ReadFrames(_ context.Context, im *Impl, op *conformpb.ReadFrames) (*conformpb.ReadFramesResult, error) {
	return im.readFrames(op)
}

// WriteFrames answers the writeFrames op (ranvier-wire §1.4, §2).
func WriteFrames(ctx context.Context, im *Impl, op *conformpb.WriteFrames) (*conformpb.WriteFramesResult, error) {
	return im.writeFrames(ctx, op)
}

// Receive answers the receive op (ranvier-wire §4, §6).
func Receive(_ context.Context, im *Impl, op *conformpb.Receive) (*conformpb.ReceiveResult, error) {
	return im.receive(op)
}

// Decode answers the decode op (ranvier-wire §7).
func Decode(_ context.Context, im *Impl, op *conformpb.Decode) (*conformpb.DecodeResult, error) {
	return im.decode(op), nil
}

// Encode answers the encode op (ranvier-wire §7).
func Encode(_ context.Context, im *Impl, op *conformpb.Encode) (*conformpb.EncodeResult, error) {
	return im.encode(op), nil
}

// Track answers the track op (ranvier-streams §3).
func Track(_ context.Context, im *Impl, op *conformpb.Track) (*conformpb.TrackResult, error) {
	return im.track(op), nil
}

// DriveQueue answers the driveQueue op (ranvier-streams §5).
func DriveQueue(_ context.Context, im *Impl, op *conformpb.DriveQueue) (*conformpb.DriveQueueResult, error) {
	return im.driveQueue(op), nil
}

// ReceiveConnections answers the receiveConnections op (ranvier-streams
// §3.6a).
func ReceiveConnections(_ context.Context, im *Impl, op *conformpb.ReceiveConnections) (*conformpb.ReceiveConnectionsResult, error) {
	return im.receiveConnections(op)
}

// Publish answers the publish op (ranvier-streams §2, §4).
func Publish(_ context.Context, im *Impl, op *conformpb.Publish) (*conformpb.PublishResult, error) {
	return im.publish(op), nil
}

// ReadAnnouncements answers the readAnnouncements op (ranvier-streams §6).
func ReadAnnouncements(_ context.Context, im *Impl, op *conformpb.ReadAnnouncements) (*conformpb.ReadAnnouncementsResult, error) {
	return im.readAnnouncements(op), nil
}

// MatchAnnouncements answers the matchAnnouncements op (ranvier-streams
// §6.4–§6.7).
func MatchAnnouncements(_ context.Context, im *Impl, op *conformpb.MatchAnnouncements) (*conformpb.MatchAnnouncementsResult, error) {
	return im.matchAnnouncements(op), nil
}

// Latency answers the latency op (ranvier-streams §4.5).
func Latency(_ context.Context, im *Impl, op *conformpb.Latency) (*conformpb.LatencyResult, error) {
	return im.latency(op), nil
}

// TLV answers the tlv ops (tlv.proto).
func TLV(ctx context.Context, im *Impl, op *conformpb.TlvOp) (*conformpb.TlvResult, error) {
	return im.tlv(ctx, op)
}

// Doppler answers the doppler ops (doppler.proto), codec and live.
func Doppler(ctx context.Context, im *Impl, op *conformpb.DopplerOp) (*conformpb.DopplerResult, error) {
	return im.doppler(ctx, op)
}

// Live answers the live data-plane ops (live.proto).
func Live(ctx context.Context, im *Impl, op *conformpb.LiveOp) (*conformpb.LiveResult, error) {
	return im.live(ctx, op)
}

// Control answers the control-plane ops (control.proto).
func Control(ctx context.Context, im *Impl, op *conformpb.ControlOp) (*conformpb.ControlResult, error) {
	return im.control(ctx, op)
}

// Graph answers the graph-model ops (graph.proto).
func Graph(ctx context.Context, im *Impl, op *conformpb.GraphOp) (*conformpb.GraphResult, error) {
	return im.graph(ctx, op)
}
