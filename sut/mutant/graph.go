package mutant

// graphMutants break the reference's graph parts (sut/impl/graphops.go).
var graphMutants []Mutant
