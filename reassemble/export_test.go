package reassemble

// UsedEmptyCode says whether f's last InflateSparse decoded with an empty
// Huffman code, where klauspost's decoder uses a stale table instead of
// failing (see inflate_sparse.go).
func UsedEmptyCode(f *Inflater) bool { return f.sp != nil && f.sp.emptyCode }
