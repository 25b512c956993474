package mutant

// dopplerMutants are the doppler suite's mutants.
var dopplerMutants []Mutant
