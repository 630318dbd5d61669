//! Warp-specialization partitioner: decides which ops run in the producer
//! warpgroup (TMA tile copies and the address arithmetic only they use) and
//! which in the consumer warpgroups, and joins them with arefs. Not written
//! yet: the partitioner issue builds it.
