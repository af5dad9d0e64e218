package cs

import "encoding/binary"

// AppendInt appends a canonical (varint) encoding of v to b. Machines use it
// in AppendState and messages in AppendBinary.
func AppendInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendIDs appends the length of ids and each id, in the given order.
func AppendIDs(b []byte, ids []ID) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = binary.AppendVarint(b, int64(id))
	}
	return b
}

// AppendBool appends 1 for true and 0 for false.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}
