package mutant

// controlMutants break the reference's control parts (sut/impl/controlops.go).
var controlMutants []Mutant
