package sessions_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// TestExportOptionsCheck: each rule of the export options, in the one place both front ends
// ask (ExportOptions.CheckGiven, Check, ParseExportDType): an *OptionError naming the option
// and its value, or a layout's setting refused by package layouts, each of kind ErrInvalid.
// The options a user gave are refused first where the format does not use them, whatever
// their value.
func TestExportOptionsCheck(t *testing.T) {
	const L = sessions.DefaultLength
	npz := func(o sessions.ExportOptions) sessions.ExportOptions {
		o.Format, o.Length = sessions.ExportNPZ, L
		return o
	}
	for _, c := range []struct {
		o      sessions.ExportOptions
		given  []string
		option string // the OptionError's, "" for another error
		want   string // "" where the options are taken
	}{
		{sessions.ExportOptions{Format: "hdf5", Length: L}, nil, "format", `format "hdf5" is unknown: want npz, safetensors, pt, json, csv or npy`},
		{sessions.ExportOptions{Format: "hdf5", Length: L}, []string{"layout"}, "format", `format "hdf5" is unknown: want npz, safetensors, pt, json, csv or npy`},
		// length: [1, MaxLength], 0 too (a front end passes the length given, or the default)
		{sessions.ExportOptions{Format: sessions.ExportCSV}, nil, "length", fmt.Sprintf("length 0 is outside [1, %d]", sessions.MaxLength)},
		{sessions.ExportOptions{Format: sessions.ExportNPY, Length: sessions.MaxLength + 1}, nil, "length", fmt.Sprintf("length %d is outside [1, %d]", sessions.MaxLength+1, sessions.MaxLength)},
		{sessions.ExportOptions{Format: sessions.ExportNPY, Length: sessions.MaxLength}, []string{"length"}, "", ""},
		// trunc-len: [0, MaxTruncLen], and for the rtf layout only
		{npz(sessions.ExportOptions{TruncLen: -1}), nil, "trunc-len", fmt.Sprintf("trunc-len -1 is outside [0, %d]", sessions.MaxTruncLen)},
		{npz(sessions.ExportOptions{TruncLen: sessions.MaxTruncLen + 1}), nil, "trunc-len", fmt.Sprintf("trunc-len %d is outside [0, %d]", sessions.MaxTruncLen+1, sessions.MaxTruncLen)},
		{npz(sessions.ExportOptions{TruncLen: sessions.MaxTruncLen}), []string{"trunc-len"}, "", ""},
		{npz(sessions.ExportOptions{Layout: layouts.S4D, TruncLen: 32}), nil, "trunc-len", "trunc-len 32 applies to the rtf layout, not to the s4d layout"},
		{npz(sessions.ExportOptions{Layout: layouts.RTF, TruncLen: 32}), []string{"layout", "trunc-len"}, "", ""},
		// dtype: float64, float32 or bfloat16, bfloat16 to pt and safetensors only
		{npz(sessions.ExportOptions{DType: arrays.Complex64}), nil, "dtype", `dtype "complex64": want float64, float32 or bfloat16`},
		{npz(sessions.ExportOptions{DType: arrays.Float16}), nil, "dtype", `dtype "float16": want float64, float32 or bfloat16`},
		{npz(sessions.ExportOptions{DType: arrays.BFloat16}), nil, "dtype", "dtype bfloat16: npz has no bfloat16 (pt and safetensors have)"},
		{sessions.ExportOptions{Format: sessions.ExportNPY, Length: L, DType: arrays.BFloat16}, nil, "dtype", "dtype bfloat16: npy has no bfloat16 (pt and safetensors have)"},
		{sessions.ExportOptions{Format: sessions.ExportSafetensors, Length: L, DType: arrays.BFloat16}, []string{"dtype"}, "", ""},
		{sessions.ExportOptions{Format: sessions.ExportTorch, Length: L, DType: arrays.BFloat16}, []string{"dtype"}, "", ""},
		{sessions.ExportOptions{Format: sessions.ExportNPY, Length: L, DType: arrays.Float32}, []string{"dtype"}, "", ""},
		// layout: one export writes, for the tensor formats
		{npz(sessions.ExportOptions{Layout: "hyena"}), nil, "layout", `layout "hyena": want rtf, s4d, stripedhyena, sos`},
		{npz(sessions.ExportOptions{Layout: "s4x"}), nil, "layout", `layout "s4x": want rtf, s4d, stripedhyena, sos`},
		{npz(sessions.ExportOptions{Layout: layouts.SOS}), []string{"layout"}, "", ""},
		// the layout's settings (package layouts' rules, before any item is read)
		{npz(sessions.ExportOptions{Layout: layouts.RTF, Options: map[string]string{"disc": "zoh"}}), nil, "", "--disc is an option of the s4d and s5 layout, not of rtf"},
		// with no layout named, an option of some layouts asks for one of them (the s4d
		// layout a diagonal filter may be written in), and is refused where no layout a
		// filter of any form may be written in takes them all (rtf's refusal)
		{npz(sessions.ExportOptions{Options: map[string]string{"disc": "zoh"}}), []string{"disc"}, "", ""},
		{npz(sessions.ExportOptions{TruncLen: 8, Options: map[string]string{"disc": "zoh"}}), nil, "", "--disc is an option of the s4d and s5 layout, not of rtf"},
		{npz(sessions.ExportOptions{Options: map[string]string{"h0": "twice", "disc": "zoh"}}), nil, "", "--disc is an option of the s4d and s5 layout, not of rtf"},
		{npz(sessions.ExportOptions{Layout: layouts.S4D, Options: map[string]string{"disc": "euler"}}), nil, "", `--disc "euler": want zoh, bilinear, dss`},
		{npz(sessions.ExportOptions{Layout: layouts.StripedHyena, Options: map[string]string{"short-filter": "true"}}), nil, "",
			"--short-filter is an option of import (stripedhyena: read the short FIR filters (short_filter_weight) as kernels instead of the long IIR filter); export does not use it"},
		{npz(sessions.ExportOptions{Layout: layouts.S4D, Options: map[string]string{"disc": "bilinear"}}), []string{"layout", "disc"}, "", ""},
		// prefix: UTF-8, ending in "." or "/"
		{npz(sessions.ExportOptions{Prefix: "layers.0.filter"}), nil, "prefix", `prefix "layers.0.filter": a prefix ends in "." or "/", as a state_dict's names do (layers.0.filter.)`},
		{npz(sessions.ExportOptions{Prefix: "\xab."}), nil, "prefix", `prefix "\xab." is not valid UTF-8, as every tensor name it begins must be`},
		{npz(sessions.ExportOptions{Prefix: "model/"}), []string{"prefix"}, "", ""},
		// an option given where the format does not use it, whatever its value
		{sessions.ExportOptions{Format: sessions.ExportJSON, Length: L}, []string{"layout"}, "layout", "layout applies to pt, safetensors or npz, not to json"},
		{sessions.ExportOptions{Format: sessions.ExportCSV, Length: L}, []string{"prefix"}, "prefix", "prefix applies to pt, safetensors or npz, not to csv"},
		{sessions.ExportOptions{Format: sessions.ExportJSON, Length: L}, []string{"trunc-len"}, "trunc-len", "trunc-len applies to pt, safetensors or npz, not to json"},
		{sessions.ExportOptions{Format: sessions.ExportCSV, Length: L}, []string{"dtype"}, "dtype", "dtype applies to pt, safetensors, npz or npy, not to csv"},
		{sessions.ExportOptions{Format: sessions.ExportJSON, Length: L}, []string{"length"}, "length", "length applies to csv, npy, pt, safetensors or npz, not to json"},
		// length with a layout's tensors: the model's length, the modal layouts' check window
		// (rtf's is trunc-len), given or set (SetLength)
		{sessions.ExportOptions{Format: sessions.ExportTorch, Length: L, Layout: layouts.RTF}, []string{"layout", "length"}, "length", "length applies to the s4d, stripedhyena and sos layouts, not to the rtf layout: its module's length is trunc-len, which sets its check's window"},
		{npz(sessions.ExportOptions{Layout: layouts.RTF, ModelLength: 64}), nil, "length", "length 64 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout: its module's length is trunc-len, which sets its check's window"},
		// with no layout named, length asks for one that takes it (s4d, stripedhyena), unless
		// another option asks for rtf
		{sessions.ExportOptions{Format: sessions.ExportTorch, Length: L}, []string{"length"}, "", ""},
		{npz(sessions.ExportOptions{ModelLength: 64}), []string{"length"}, "", ""},
		{npz(sessions.ExportOptions{ModelLength: 64, TruncLen: 32}), []string{"length", "trunc-len"}, "length", "length 64 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout: its module's length is trunc-len, which sets its check's window"},
		{npz(sessions.ExportOptions{ModelLength: 64, Options: map[string]string{"h0": "twice"}}), nil, "length", "length 64 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout: its module's length is trunc-len, which sets its check's window"},
		{npz(sessions.ExportOptions{Layout: layouts.S4D, ModelLength: 64}), []string{"layout", "length"}, "", ""},
		{npz(sessions.ExportOptions{Layout: layouts.SOS, ModelLength: sessions.MaxLength + 1}), nil, "length", fmt.Sprintf("length %d is outside [1, %d]", sessions.MaxLength+1, sessions.MaxLength)},
		{sessions.ExportOptions{Format: sessions.ExportSafetensors, Length: L}, []string{"compress"}, "compress", "compress applies to npz, not to safetensors"},
		{sessions.ExportOptions{Format: sessions.ExportNPY, Length: L}, []string{"h0"}, "h0", "h0 applies to pt, safetensors or npz, not to npy"},
		{sessions.ExportOptions{Format: sessions.ExportSafetensors, Length: L}, []string{"compress", "length"}, "compress", "compress applies to npz, not to safetensors"},
		{npz(sessions.ExportOptions{}), []string{"output"}, "output", "output is no option of export"},
		// given options are judged in order of name, whatever the order given
		{sessions.ExportOptions{Format: sessions.ExportJSON, Length: L}, []string{"prefix", "layout"}, "layout", "layout applies to pt, safetensors or npz, not to json"},
		// and before the values
		{sessions.ExportOptions{Format: sessions.ExportCSV, Length: 0}, []string{"prefix"}, "prefix", "prefix applies to pt, safetensors or npz, not to csv"},
	} {
		err := c.o.CheckGiven(c.given)
		if check := c.o.Check(); c.given == nil && fmt.Sprint(check) != fmt.Sprint(err) {
			t.Errorf("%+v: CheckGiven(nil) %v, Check %v", c.o, err, check)
		}
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v given %v: %v, want none", c.o, c.given, err)
			}
			continue
		}
		var oe *sessions.OptionError
		if err == nil || err.Error() != c.want || !errors.Is(err, sessions.ErrInvalid) || errors.As(err, &oe) != (c.option != "") || oe != nil && oe.Option != c.option {
			t.Errorf("%+v given %v: %v, want %q (option %q)", c.o, c.given, err, c.want, c.option)
		}
	}
}

// TestParseExportDType: the dtypes export writes, by any name arrays.ParseDType knows; any
// other is Check's error for it, so that a front end says what Check says.
func TestParseExportDType(t *testing.T) {
	for s, want := range map[string]arrays.DType{"float64": arrays.Float64, "f8": arrays.Float64, "float32": arrays.Float32, "f4": arrays.Float32, "bfloat16": arrays.BFloat16, "bf16": arrays.BFloat16} {
		if dt, err := sessions.ParseExportDType(s); err != nil || dt != want {
			t.Errorf("%q: %v, %v, want %v", s, dt, err, want)
		}
	}
	check := sessions.ExportOptions{Format: sessions.ExportNPZ, Length: 1, DType: arrays.Float16}.Check()
	for _, s := range []string{"float16", "half", "complex64", "flo", ""} {
		_, err := sessions.ParseExportDType(s)
		var oe *sessions.OptionError
		if want := fmt.Sprintf("dtype %q: want float64, float32 or bfloat16", s); err == nil || err.Error() != want || !errors.As(err, &oe) || oe.Option != "dtype" {
			t.Errorf("%q: %v, want %q", s, err, want)
		}
	}
	if _, err := sessions.ParseExportDType("float16"); err == nil || check == nil || err.Error() != check.Error() {
		t.Errorf("float16: parsed %v, checked %v", err, check)
	}
}

// TestExportOptionFormats: the table both front ends read, option by option.
func TestExportOptionFormats(t *testing.T) {
	tensors := []sessions.ExportFormat{sessions.ExportTorch, sessions.ExportSafetensors, sessions.ExportNPZ}
	for option, want := range map[string][]sessions.ExportFormat{
		"layout": tensors, "prefix": tensors, "trunc-len": tensors,
		"dtype":    append(slices.Clone(tensors), sessions.ExportNPY),
		"length":   append([]sessions.ExportFormat{sessions.ExportCSV, sessions.ExportNPY}, tensors...), // the modal layouts: the model's length
		"compress": {sessions.ExportNPZ},
		"disc":     tensors, "h0": tensors, "short-filter": tensors, // the layouts' settings
		"output": nil, "trunc_len": nil, "": nil,
	} {
		if got := sessions.ExportOptionFormats(option); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", option, got, want)
		}
	}
	// each call's list is its own
	a := sessions.ExportOptionFormats("layout")
	a[0] = sessions.ExportCSV
	if b := sessions.ExportOptionFormats("layout"); b[0] != sessions.ExportTorch {
		t.Errorf("a caller's change reached the table: %v", b)
	}
}

// TestImportOptionsCheck: import's trunc_len is in export's range, refused before any file
// is read (here, one that does not exist); a negative one was read as none.
func TestImportOptionsCheck(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.safetensors")
	for _, c := range []struct {
		n    int
		want string
	}{
		{-1, fmt.Sprintf("trunc-len -1 is outside [0, %d]", sessions.MaxTruncLen)},
		{sessions.MaxTruncLen + 1, fmt.Sprintf("trunc-len %d is outside [0, %d]", sessions.MaxTruncLen+1, sessions.MaxTruncLen)},
	} {
		o := sessions.ImportOptions{TruncLen: c.n}
		for what, err := range map[string]error{"Check": o.Check(), "Import": importErr(sessions.Import(missing, o)), "ImportData": importErr(sessions.ImportData([]byte("{}"), "x.json", o))} {
			var oe *sessions.OptionError
			if err == nil || err.Error() != c.want || !errors.As(err, &oe) || oe.Option != "trunc-len" || !errors.Is(err, sessions.ErrInvalid) {
				t.Errorf("%s with trunc_len %d: %v, want %q", what, c.n, err, c.want)
			}
		}
	}
	for _, n := range []int{0, sessions.MaxTruncLen} {
		if err := (sessions.ImportOptions{TruncLen: n}).Check(); err != nil {
			t.Errorf("trunc_len %d: %v", n, err)
		}
	}
}

func importErr(_ sessions.Item, err error) error { return err }
