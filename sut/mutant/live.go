package mutant

// liveMutants break the reference's live parts (sut/impl/liveops.go).
var liveMutants []Mutant
