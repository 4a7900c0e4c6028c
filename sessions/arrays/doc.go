// Package arrays reads and writes the array files researchers move filters in: NumPy .npy
// and .npz, safetensors and CSV, as float64 tensors with a shape. It knows nothing of
// filters; the sessions package maps arrays to kernels and filter banks.
//
// # Overview
//
// An Array is a shape and its float64 values in C (row-major) order. Readers convert every
// supported element type exactly to float64: float16, bfloat16, float32 and float64,
// little- or big-endian (.npy, .npz), in C or Fortran order (.npy, .npz); safetensors files
// are little-endian and C-ordered by definition. Writers write float32 or float64,
// little-endian, C order, as numpy.save, numpy.savez(_compressed) and the safetensors
// package do, so that numpy.load and safetensors.numpy.load_file read them.
//
//   - .npy: DecodeNPY (in memory), ReadNPY (a stream), EncodeNPY, WriteNPY.
//   - .npz: OpenNPZ lists the arrays from their headers and Read reads one; WriteNPZ.
//   - .safetensors: OpenSafetensors checks the header and Read reads one tensor, so a large
//     checkpoint costs only what is asked for; EncodeSafetensors, WriteSafetensors.
//   - CSV: ReadCSV, EncodeCSV, WriteCSV (one row per line).
//   - Open reads any of them from a path, recognising the format by its first bytes.
//   - Raw tensors, for copying a checkpoint's tensors bit for bit whatever their element type
//     (integers and booleans too): File.RawInfos and File.ReadRaw (safetensors, torch.save,
//     .npz) give them as little-endian C-order bytes, WriteRaw writes a file of them one
//     tensor at a time; the float writers above are WriteRaw's. A torch.save file's tied
//     tensors (RawInfo.Tied) are written back to one as one storage.
//   - Packed, and Array's MarshalJSON/UnmarshalJSON: the compact JSON form of an array
//     (base64 of little-endian float64) used inside ssmlab's session files.
//
// The file formats, with what ssmlab accepts and writes, are described in docs/formats.md
// ("NumPy, safetensors and CSV").
//
// # Invariants
//
//   - Every Array a reader returns has finite values: NaN and infinities are errors that
//     name the entry, since no filter coefficient or kernel sample may be one.
//   - A reader checks the sizes a file declares (header lengths, shapes, zip directory
//     sizes, safetensors offsets) against each other and against the file before it
//     allocates storage for the data, and never holds more than MaxElements values. A
//     stream (an .npz entry) is read in chunks, so storage grows with the data actually
//     present, not with what a header claims. Safetensors and torch.save headers may list
//     tensors of up to MaxListed elements (the embedding of a large model), which Read
//     refuses beyond MaxElements and ReadRaw copies up to MaxRawBytes.
//   - The data of a zip entry (.npz, torch.save) is checked against its CRC-32 when it is
//     first read, as numpy.load and torch.load check it: a corrupted entry is an error naming
//     it, never data.
//   - Round trips are exact: an array written as float64 and read back is bit-identical.
//   - Tensor names are UTF-8 text, in the files read and in those written (ValidName): a
//     name that is not is an error naming it, never replaced (JSON would put U+FFFD for it).
//
// # Errors
//
// Bad input gives one error line wrapping ErrInvalid (malformed, truncated or inconsistent
// files, sizes beyond the limits, non-finite values) or ErrUnsupported (well-formed files
// holding integers, complex numbers, structured records, unknown versions); a missing name
// wraps ErrNotFound. Programmer errors (Rows of a 3-D array) panic.
package arrays
