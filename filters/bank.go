package filters

import (
	"fmt"
	"runtime"
	"sync"
)

// MaxChannels is the largest number of channels a Bank accepts.
const MaxChannels = 1 << 16

// Bank is a set of SISO channels of one form: the d_model layout of an RTF layer, where
// channel i filters feature i independently.
type Bank struct {
	Channels []Filter
}

// NewBank validates the channels (all of one form) and returns a Bank that shares them.
func NewBank(channels []Filter) (*Bank, error) {
	b := &Bank{Channels: channels}
	return b, b.Validate()
}

// Form returns the channels' form ("" for an empty bank).
func (b *Bank) Form() Form {
	if len(b.Channels) == 0 {
		return ""
	}
	return b.Channels[0].Form()
}

// Validate checks the channel count, that every channel is valid and that all share one form.
func (b *Bank) Validate() error {
	if len(b.Channels) == 0 {
		return invalidf("a bank needs at least one channel")
	}
	if len(b.Channels) > MaxChannels {
		return invalidf("%d channels exceed the limit %d", len(b.Channels), MaxChannels)
	}
	form := b.Channels[0].Form()
	for i, c := range b.Channels {
		if c.Form() != form {
			return invalidf("channel %d is %s but channel 0 is %s: a bank holds one form", i, c.Form(), form)
		}
		if err := c.Validate(); err != nil {
			return fmt.Errorf("channel %d: %w", i, err)
		}
	}
	return nil
}

// ConvertBank converts every channel, in parallel across cores. On error it returns the
// first failing channel's error and no bank.
func ConvertBank(b *Bank, to Form) (*Bank, []Report, error) {
	out := make([]Filter, len(b.Channels))
	reports := make([]Report, len(b.Channels))
	errs := make([]error, len(b.Channels))
	ForEachChannel(len(b.Channels), func(i int) {
		out[i], reports[i], errs[i] = Convert(b.Channels[i], to)
	})
	for i, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("channel %d: %w", i, err)
		}
	}
	return &Bank{Channels: out}, reports, nil
}

// ForEachChannel calls fn(0) … fn(n-1) on up to GOMAXPROCS goroutines.
func ForEachChannel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Document is a named filter or bank: the content of one filter file, which package
// filters/filterfile reads and writes.
type Document struct {
	Name   string // optional "name"
	Filter Filter // set for a single filter (Bank nil)
	Bank   *Bank  // set for a bank (Filter nil)
}
