"""Team answers at the service's edge: who may review and who counts as an expert (`people`), the review message and
its buttons (`review`), drafting a candidate from a resolved thread (`capture`), and building it all (`wiring`)."""
