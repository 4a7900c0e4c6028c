package arrays

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// A restricted reader of Python's pickle format (protocols 0 to 5, as pickletools documents
// the opcodes), enough for the data.pkl of a torch.save file. It builds plain values only —
// None, bool, int64, float64, string, []byte, lists, tuples and dicts — and resolves a global
// (a module attribute, which a real unpickler would import and call) only through the
// caller's allowlist. Anything else a pickle names (os.system, builtins.eval, a class of the
// training code, an OmegaConf config) is never imported or run: it and what the pickle builds
// from it are opaque values, which the caller refuses by name where it reads and leaves
// alone elsewhere (a Lightning checkpoint's hyper_parameters beside its state_dict). Every length a pickle
// declares is checked against the bytes that remain before anything is allocated, so a
// pickle costs memory in proportion to its size.
//
// github.com/nlpodyssey/gopickle was considered: its v0.2.0 (January 2023, the latest)
// panics on opcode 0xff and on an oversized FRAME length, allocates whatever a length field
// claims before reading it, and resolves some globals (copy_reg._reconstructor,
// __builtin__.object) before a caller's hook can refuse them.

// maxPickle is the largest data.pkl read: a state_dict's pickle holds names and shapes, a
// few hundred bytes a tensor.
const maxPickle = 64 << 20

// pyList, pyTuple and pyDict are the containers; pointers, so that a walk can tell a shared
// or self-containing container by its identity.
type (
	pyList  struct{ items []any }
	pyTuple struct{ items []any }
	pyDict  struct {
		keys, vals []any
		index      map[any]int // of hashable scalar keys
	}
)

func (d *pyDict) set(k, v any) {
	switch k.(type) {
	case string, int64, bool, float64, nil:
		if d.index == nil {
			d.index = map[any]int{}
		}
		if i, ok := d.index[k]; ok {
			d.vals[i] = v
			return
		}
		d.index[k] = len(d.keys)
	}
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
}

// get returns the value of a string key.
func (d *pyDict) get(k string) (any, bool) {
	i, ok := d.index[k]
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

// pyGlobal is a global a pickle names, once the allowlist has accepted it.
type pyGlobal struct{ module, name string }

func (g pyGlobal) String() string { return g.module + "." + g.name }

// pyOpaque stands for a global outside the allowlist and for whatever a pickle builds from it
// (calls it, instantiates it, sets its state or items, a set): nothing is imported or run.
// Checkpoints keep such objects beside their model (a Lightning checkpoint's
// hyper_parameters are an OmegaConf DictConfig, a training script's args an
// argparse.Namespace); what the pickle gave one is kept as its parts, so that the caller
// skips an object that holds no tensor and refuses, naming the global, one that does
// (torch.go's walker): its tensors would be lost.
type pyOpaque struct {
	global string
	parts  []any // arguments, states and items, in the pickle's order
}

// pickleHooks decide what a pickle may name and what its persistent IDs load.
type pickleHooks struct {
	// global accepts a global (returning what stands for it) or refuses it.
	global func(module, name string) (any, error)
	// call applies an accepted global to its arguments (REDUCE).
	call func(fn any, args []any) (any, error)
	// persistent loads a persistent ID (BINPERSID).
	persistent func(pid any) (any, error)
}

// unpickler is the state of one run.
type unpickler struct {
	data  []byte
	pos   int
	stack []any
	marks []int
	memo  map[uint64]any
	hooks pickleHooks
	// opaque is the first global the allowlist did not accept, named in an error that follows
	// it: the pickle was refused for what it would have run.
	opaque string
}

func pickleErrorf(format string, args ...any) error {
	return invalidf("pickle: "+format, args...)
}

// unpickle runs the pickle in data and returns the value it builds.
func unpickle(data []byte, h pickleHooks) (any, error) {
	if len(data) > maxPickle {
		return nil, invalidf("pickle: %d bytes exceed the limit of %d", len(data), maxPickle)
	}
	u := &unpickler{data: data, memo: map[uint64]any{}, hooks: h}
	for {
		if u.pos >= len(u.data) {
			return nil, pickleErrorf("truncated: the pickle ends before its STOP opcode")
		}
		op := u.data[u.pos]
		at := u.pos
		u.pos++
		done, err := u.step(op)
		if err != nil {
			if _, ok := err.(*fileError); !ok {
				err = invalidf("%v", err)
			}
			err = within(err, fmt.Sprintf("pickle: opcode %s at byte %d", opName(op), at))
			if u.opaque != "" {
				err = fmt.Errorf("%w (the pickle names the Python global %s before, which ssmlab never runs)", err, u.opaque)
			}
			return nil, err
		}
		if done {
			if len(u.stack) != 1 || len(u.marks) != 0 {
				return nil, pickleErrorf("malformed: STOP leaves %d values and %d marks on the stack, want one value", len(u.stack), len(u.marks))
			}
			return u.stack[0], nil
		}
	}
}

func opName(op byte) string {
	if op >= 0x20 && op < 0x7f {
		return strconv.QuoteRune(rune(op))
	}
	return fmt.Sprintf("0x%02x", op)
}

func (u *unpickler) take(n uint64) ([]byte, error) {
	if n > uint64(len(u.data)-u.pos) {
		return nil, invalidf("truncated: %d bytes declared, %d remain", n, len(u.data)-u.pos)
	}
	b := u.data[u.pos : u.pos+int(n)]
	u.pos += int(n)
	return b, nil
}

func (u *unpickler) uint(n int) (uint64, error) {
	b, err := u.take(uint64(n))
	if err != nil {
		return 0, err
	}
	var x uint64
	for i := n - 1; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x, nil
}

func (u *unpickler) line() (string, error) {
	i := bytes.IndexByte(u.data[u.pos:], '\n')
	if i < 0 {
		return "", invalidf("truncated: no end of line")
	}
	s := string(u.data[u.pos : u.pos+i])
	u.pos += i + 1
	return s, nil
}

func (u *unpickler) push(v any) { u.stack = append(u.stack, v) }

func (u *unpickler) pop() (any, error) {
	if len(u.stack) == 0 || len(u.marks) > 0 && len(u.stack) == u.marks[len(u.marks)-1] {
		return nil, invalidf("the stack is empty")
	}
	v := u.stack[len(u.stack)-1]
	u.stack = u.stack[:len(u.stack)-1]
	return v, nil
}

func (u *unpickler) top() (any, error) {
	v, err := u.pop()
	if err == nil {
		u.push(v)
	}
	return v, err
}

// popMark returns the values pushed since the last MARK and drops the mark.
func (u *unpickler) popMark() ([]any, error) {
	if len(u.marks) == 0 {
		return nil, invalidf("no MARK")
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	items := append([]any(nil), u.stack[m:]...)
	u.stack = u.stack[:m]
	return items, nil
}

func (u *unpickler) str(n uint64) error {
	b, err := u.take(n)
	if err == nil {
		u.push(string(b))
	}
	return err
}

func (u *unpickler) bytesOf(n uint64) error {
	b, err := u.take(n)
	if err == nil {
		u.push(bytes.Clone(b))
	}
	return err
}

// long decodes a little-endian two's complement integer of at most 8 bytes.
func long(b []byte) (int64, error) {
	if len(b) > 8 {
		return 0, unsupportedf("an integer of %d bytes is beyond int64", len(b))
	}
	if len(b) == 0 {
		return 0, nil
	}
	var x uint64
	for i := len(b) - 1; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	if s := uint(len(b)) * 8; s < 64 && b[len(b)-1]&0x80 != 0 {
		x |= ^uint64(0) << s // sign-extend
	}
	return int64(x), nil
}

func (u *unpickler) memoPut(i uint64) error {
	v, err := u.top()
	if err == nil {
		u.memo[i] = v
	}
	return err
}

func (u *unpickler) memoGet(i uint64) error {
	v, ok := u.memo[i]
	if !ok {
		return invalidf("memo entry %d is not set", i)
	}
	u.push(v)
	return nil
}

// step runs one opcode; it reports true at STOP. The opcodes that push values, build
// containers and reach objects are in stepValue, stepContainer and stepObject.
func (u *unpickler) step(op byte) (bool, error) {
	var err error
	switch op {
	case 0x80: // PROTO
		var v uint64
		if v, err = u.uint(1); err == nil && v > 5 {
			err = unsupportedf("protocol %d (ssmlab reads 0 to 5)", v)
		}
	case 0x95: // FRAME: the data is in memory already; check the declared length.
		var n uint64
		if n, err = u.uint(8); err == nil && n > uint64(len(u.data)-u.pos) {
			err = invalidf("truncated: a frame of %d bytes, %d remain", n, len(u.data)-u.pos)
		}
	case '.': // STOP
		return true, nil
	case '(': // MARK
		u.marks = append(u.marks, len(u.stack))
	case '0': // POP
		_, err = u.pop()
	case '1': // POP_MARK
		_, err = u.popMark()
	case '2': // DUP
		var v any
		if v, err = u.top(); err == nil {
			u.push(v)
		}
	case 'q':
		var i uint64
		if i, err = u.uint(1); err == nil {
			err = u.memoPut(i)
		}
	case 'r':
		var i uint64
		if i, err = u.uint(4); err == nil {
			err = u.memoPut(i)
		}
	case 0x94: // MEMOIZE
		err = u.memoPut(uint64(len(u.memo)))
	case 'p', 'g': // PUT, GET (text)
		var s string
		if s, err = u.line(); err != nil {
			break
		}
		i, perr := strconv.ParseUint(s, 10, 64)
		if perr != nil {
			err = invalidf("memo index %q is not a number", truncate(s, 40))
			break
		}
		if op == 'p' {
			err = u.memoPut(i)
		} else {
			err = u.memoGet(i)
		}
	case 'h':
		var i uint64
		if i, err = u.uint(1); err == nil {
			err = u.memoGet(i)
		}
	case 'j':
		var i uint64
		if i, err = u.uint(4); err == nil {
			err = u.memoGet(i)
		}
	default:
		var ok bool
		if ok, err = u.stepValue(op); !ok {
			if ok, err = u.stepContainer(op); !ok {
				if ok, err = u.stepObject(op); !ok {
					if ok, err = u.stepInstance(op); !ok {
						err = unsupportedf("ssmlab's restricted unpickler does not run this opcode (sets, extensions, out-of-band buffers and text strings are not read)")
					}
				}
			}
		}
	}
	return false, err
}

// stepInstance runs an opcode that makes an instance or a set (kept opaque: they name no
// tensor, and are refused where tensors are read); it reports false for an opcode of
// another group.
func (u *unpickler) stepInstance(op byte) (bool, error) {
	var err error
	switch op {
	case 0x81, 0x92: // NEWOBJ (cls, args), NEWOBJ_EX (cls, args, kwargs): cls.__new__(cls, …)
		n := 2
		if op == 0x92 {
			n = 3
		}
		var items []any
		for range n {
			var v any
			if v, err = u.pop(); err != nil {
				break
			}
			items = append(items, v)
		}
		if err != nil {
			break
		}
		cls, ok := items[n-1].(*pyOpaque)
		if !ok {
			err = unsupportedf("refused: the pickle instantiates %s; ssmlab reads tensors, storages and plain containers only", typeName(items[n-1]))
			break
		}
		u.push(&pyOpaque{global: cls.global, parts: items[:n-1]})
	case 'i', 'o':
		err = unsupportedf("refused: the pickle instantiates a class; ssmlab reads tensors, storages and plain containers only")
	case 0x8f: // EMPTY_SET: a set names no tensor; it stays opaque, refused where tensors are read
		u.push(&pyOpaque{global: `"builtins.set"`})
	case 0x90: // ADDITEMS
		var v any
		var items []any
		if items, err = u.popMark(); err == nil {
			if v, err = u.top(); err == nil {
				if o, ok := v.(*pyOpaque); ok {
					o.parts = append(o.parts, items...)
				} else {
					err = invalidf("ADDITEMS to %s, not a set", typeName(v))
				}
			}
		}
	case 0x91: // FROZENSET
		var items []any
		if items, err = u.popMark(); err == nil {
			u.push(&pyOpaque{global: `"builtins.frozenset"`, parts: items})
		}
	default:
		return false, nil
	}
	return true, err
}

// stepValue runs an opcode that pushes a constant, a number, a string or bytes; it reports false for an opcode of another group.
func (u *unpickler) stepValue(op byte) (bool, error) {
	var err error
	switch op {
	case 'N':
		u.push(nil)
	case 0x88:
		u.push(true)
	case 0x89:
		u.push(false)
	case 'J': // BININT
		var x uint64
		if x, err = u.uint(4); err == nil {
			u.push(int64(int32(uint32(x))))
		}
	case 'K': // BININT1
		var x uint64
		if x, err = u.uint(1); err == nil {
			u.push(int64(x))
		}
	case 'M': // BININT2
		var x uint64
		if x, err = u.uint(2); err == nil {
			u.push(int64(x))
		}
	case 0x8a, 0x8b: // LONG1, LONG4
		var n uint64
		if n, err = u.uint(map[byte]int{0x8a: 1, 0x8b: 4}[op]); err != nil {
			break
		}
		var b []byte
		if b, err = u.take(n); err != nil {
			break
		}
		var x int64
		if x, err = long(b); err == nil {
			u.push(x)
		}
	case 'I', 'L': // INT, LONG (text); INT also spells True and False
		var s string
		if s, err = u.line(); err != nil {
			break
		}
		switch s {
		case "01":
			u.push(true)
		case "00":
			u.push(false)
		default:
			x, perr := strconv.ParseInt(stringsTrimL(s), 10, 64)
			if perr != nil {
				err = invalidf("INT %q is not an int64", truncate(s, 40))
				break
			}
			u.push(x)
		}
	case 'G': // BINFLOAT (big-endian)
		var b []byte
		if b, err = u.take(8); err == nil {
			u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
		}
	case 'F': // FLOAT (text)
		var s string
		if s, err = u.line(); err != nil {
			break
		}
		x, perr := strconv.ParseFloat(s, 64)
		if perr != nil {
			err = invalidf("FLOAT %q is not a number", truncate(s, 40))
			break
		}
		u.push(x)
	case 'X', 'T': // BINUNICODE, BINSTRING
		var n uint64
		if n, err = u.uint(4); err == nil {
			err = u.str(n)
		}
	case 0x8c, 'U': // SHORT_BINUNICODE, SHORT_BINSTRING
		var n uint64
		if n, err = u.uint(1); err == nil {
			err = u.str(n)
		}
	case 0x8d: // BINUNICODE8
		var n uint64
		if n, err = u.uint(8); err == nil {
			err = u.str(n)
		}
	case 'B': // BINBYTES
		var n uint64
		if n, err = u.uint(4); err == nil {
			err = u.bytesOf(n)
		}
	case 'C': // SHORT_BINBYTES
		var n uint64
		if n, err = u.uint(1); err == nil {
			err = u.bytesOf(n)
		}
	case 0x8e: // BINBYTES8
		var n uint64
		if n, err = u.uint(8); err == nil {
			err = u.bytesOf(n)
		}
	default:
		return false, nil
	}
	return true, err
}

// stepContainer runs an opcode that builds or fills a tuple, a list or a dict; it reports false for an opcode of another group.
func (u *unpickler) stepContainer(op byte) (bool, error) {
	var err error
	switch op {
	case ')':
		u.push(&pyTuple{})
	case 't':
		var items []any
		if items, err = u.popMark(); err == nil {
			u.push(&pyTuple{items: items})
		}
	case 0x85, 0x86, 0x87: // TUPLE1, TUPLE2, TUPLE3
		n := int(op - 0x84)
		items := make([]any, n)
		for i := n - 1; i >= 0 && err == nil; i-- {
			items[i], err = u.pop()
		}
		if err == nil {
			u.push(&pyTuple{items: items})
		}
	case ']':
		u.push(&pyList{})
	case 'l':
		var items []any
		if items, err = u.popMark(); err == nil {
			u.push(&pyList{items: items})
		}
	case 'a', 'e': // APPEND, APPENDS
		var items []any
		if op == 'a' {
			var v any
			v, err = u.pop()
			items = []any{v}
		} else {
			items, err = u.popMark()
		}
		if err != nil {
			break
		}
		var l any
		if l, err = u.top(); err != nil {
			break
		}
		if o, ok := l.(*pyOpaque); ok {
			o.parts = append(o.parts, items...) // a list subclass's items
			break
		}
		list, ok := l.(*pyList)
		if !ok {
			err = invalidf("append to %s, not a list", typeName(l))
			break
		}
		list.items = append(list.items, items...)
	case '}':
		u.push(&pyDict{})
	case 'd':
		var items []any
		if items, err = u.popMark(); err == nil {
			d := &pyDict{}
			err = setItems(d, items)
			u.push(d)
		}
	case 's', 'u': // SETITEM, SETITEMS
		var items []any
		if op == 's' {
			items = make([]any, 2)
			if items[1], err = u.pop(); err == nil {
				items[0], err = u.pop()
			}
		} else {
			items, err = u.popMark()
		}
		if err != nil {
			break
		}
		var v any
		if v, err = u.top(); err != nil {
			break
		}
		if o, ok := v.(*pyOpaque); ok {
			o.parts = append(o.parts, items...) // a dict subclass's items (a defaultdict's)
			break
		}
		d, ok := v.(*pyDict)
		if !ok {
			err = invalidf("set an item of %s, not a dict", typeName(v))
			break
		}
		err = setItems(d, items)
	default:
		return false, nil
	}
	return true, err
}

// stepObject runs an opcode that reaches objects: a global, a call, a state, a persistent id; it reports false for an opcode of another group.
func (u *unpickler) stepObject(op byte) (bool, error) {
	var err error
	switch op {
	case 'c': // GLOBAL
		var mod, name string
		if mod, err = u.line(); err == nil {
			if name, err = u.line(); err == nil {
				err = u.global(mod, name)
			}
		}
	case 0x93: // STACK_GLOBAL
		var m, n any
		if n, err = u.pop(); err == nil {
			m, err = u.pop()
		}
		if err != nil {
			break
		}
		mod, ok1 := m.(string)
		name, ok2 := n.(string)
		if !ok1 || !ok2 {
			err = invalidf("STACK_GLOBAL of %s and %s, not two strings", typeName(m), typeName(n))
			break
		}
		err = u.global(mod, name)
	case 'R': // REDUCE
		var fn, args any
		if args, err = u.pop(); err == nil {
			fn, err = u.pop()
		}
		if err != nil {
			break
		}
		t, ok := args.(*pyTuple)
		if !ok {
			err = invalidf("REDUCE with %s for arguments, not a tuple", typeName(args))
			break
		}
		var v any
		if v, err = u.hooks.call(fn, t.items); err == nil {
			u.push(v)
		}
	case 'b': // BUILD: set an object's state. A state_dict is an OrderedDict with a _metadata
		// attribute (module versions), which this ignores; nothing else is built.
		var state, obj any
		if state, err = u.pop(); err == nil {
			obj, err = u.top()
		}
		if err == nil {
			if o, ok := obj.(*pyOpaque); ok {
				o.parts = append(o.parts, state)
				break
			}
			if _, ok := obj.(*pyDict); !ok {
				err = unsupportedf("refused: BUILD sets the state of %s; ssmlab builds plain values only", typeName(obj))
			}
		}
		_ = state
	case 'Q': // BINPERSID
		var pid any
		if pid, err = u.pop(); err != nil {
			break
		}
		var v any
		if v, err = u.hooks.persistent(pid); err == nil {
			u.push(v)
		}
	default:
		return false, nil
	}
	return true, err
}

func stringsTrimL(s string) string {
	if len(s) > 0 && s[len(s)-1] == 'L' {
		return s[:len(s)-1]
	}
	return s
}

func setItems(d *pyDict, items []any) error {
	if len(items)%2 != 0 {
		return invalidf("%d values for key-value pairs", len(items))
	}
	for i := 0; i < len(items); i += 2 {
		d.set(items[i], items[i+1])
	}
	return nil
}

func (u *unpickler) global(mod, name string) error {
	v, err := u.hooks.global(mod, name)
	if err != nil {
		return err
	}
	if o, ok := v.(*pyOpaque); ok && u.opaque == "" {
		u.opaque = o.global
	}
	u.push(v)
	return nil
}

// typeName names a value's Python type in messages.
func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		return "a bool"
	case int64:
		return "an int"
	case float64:
		return "a float"
	case string:
		return "a str"
	case []byte:
		return "bytes"
	case *pyList:
		return "a list"
	case *pyTuple:
		return "a tuple"
	case *pyDict:
		return "a dict"
	case pyGlobal:
		return v.String()
	case *pyOpaque:
		return "an object of " + v.global
	}
	return fmt.Sprintf("%T", v)
}
