package mutant

// tlvMutants are the TLV suite's mutants.
var tlvMutants []Mutant
