package main

import (
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/sim"
)

// crashStudyFlags are the flags the crash studies (`experiment ft07` and
// `experiment ftgcs`) share: where the tables go, the seeds, the crash
// schedule, the load and the failure detector.
type crashStudyFlags struct {
	out         string
	seed        uint64
	seeds       int
	crash       string
	lambda, e   float64
	detector    string
	detectDelay float64
	after       float64
}

// crashStudyHelp is what a study says about the shared flags whose meaning
// is its own.
type crashStudyHelp struct {
	out, seed, seeds, crash, detector, detectDelay, after string
}

// register adds the shared flags to fs with the defaults in def.
func (f *crashStudyFlags) register(fs *pflag.FlagSet, def crashStudyFlags, h crashStudyHelp) {
	fs.StringVar(&f.out, "out", def.out, h.out)
	fs.Uint64Var(&f.seed, "seed", def.seed, h.seed)
	fs.IntVar(&f.seeds, "seeds", def.seeds, h.seeds)
	fs.StringVar(&f.crash, "crash", def.crash, h.crash)
	fs.Float64Var(&f.lambda, "lambda", def.lambda, "request rate, requests per time unit spent OutCS, > 0")
	fs.Float64Var(&f.e, "E", def.e, "mean time InCS, time units, >= 0")
	fs.StringVar(&f.detector, "detector", def.detector, h.detector)
	fs.Float64Var(&f.detectDelay, "detect-delay", def.detectDelay, h.detectDelay)
	fs.Float64Var(&f.after, "after", def.after, h.after)
}

// checkOut refuses an --out that names no directory.
func (f *crashStudyFlags) checkOut() error {
	if strings.TrimSpace(f.out) == "" {
		return badInput("--out %q names no directory", f.out)
	}
	return nil
}

// prepare checks a study's flags with study, which returns its setting,
// then creates the --out directory.
func prepare[S any](f *crashStudyFlags, study func() (S, error)) (S, error) {
	c, err := study()
	if err != nil {
		return c, err
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return c, badInput("--out %s: %v", f.out, err)
	}
	return c, nil
}

// checkSeeds refuses a --seeds outside 1..maxSeeds.
func (f *crashStudyFlags) checkSeeds() error {
	if f.seeds < 1 || f.seeds > maxSeeds {
		return badInput("--seeds %d is out of range: need 1 <= seeds <= %d", f.seeds, maxSeeds)
	}
	return nil
}

// checkLoad refuses a --lambda, --E, --detect-delay or --after (or a time
// in more) out of range.
func (f *crashStudyFlags) checkLoad(more ...namedTime) error {
	return checkLoad(f.lambda, append([]namedTime{{"E", f.e}, {"detect-delay", f.detectDelay}, {"after", f.after}}, more...)...)
}

// parseDetector reads --detector, refusing S with the study's reason.
func (f *crashStudyFlags) parseDetector(whyNotS string) (detector.Class, error) {
	d, err := detector.Parse(f.detector)
	if err != nil {
		return d, badInput("--detector %q is not a failure-detector class the study takes: choose P (perfect) or T (trusting)", f.detector)
	}
	if d == detector.S {
		return d, badInput("--detector S: %s; the study takes P or T", whyNotS)
	}
	return d, nil
}

// parseCrashes reads --crash for n processes, refusing an empty schedule
// and one that crashes every process.
func (f *crashStudyFlags) parseCrashes(n int) ([]sim.Crash, error) {
	crashes, err := parseCrashes(f.crash, n, f.seed)
	switch {
	case err != nil:
		return nil, badInput("--crash %s: %v", f.crash, err)
	case len(crashes) == 0:
		return nil, badInput("--crash is empty: the study needs crashes (NODE@TIME,... or random:COUNT:FROM:TO)")
	case len(crashes) == n:
		return nil, badInput("--crash %s crashes all %d processes: leave at least one alive", f.crash, n)
	}
	return crashes, nil
}

// checkEnd refuses runs that would go on past sim.MaxTime: to t, the
// last crash plus --after.
func (f *crashStudyFlags) checkEnd(t float64) error {
	if t > sim.MaxTime {
		return badInput("--crash %s with --after %g runs to t = %g, beyond %g", f.crash, f.after, t, sim.MaxTime)
	}
	return nil
}
