// Package experiment runs the papers' studies: parameter sweeps over the
// simulator whose results are written as CSV tables and drawn as SVG or PNG
// plots (gonum/plot), so every figure in docs/ can be regenerated with one
// command.
package experiment
