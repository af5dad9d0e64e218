package gcs

import "github.com/critsec/critsec/cs"

// Decoder returns the decoder of (l,k)-GCS's messages (cs.Decoder): GCS
// sends none of its own, only its children's, tagged LminTag and KmexTag,
// which the children's decoders read (as Options gives their machines).
func Decoder(lmin, kmex cs.Decoder) cs.Decoder {
	return cs.Compose(nil, map[string]cs.Decoder{LminTag: lmin, KmexTag: kmex})
}
