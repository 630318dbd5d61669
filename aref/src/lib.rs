//! Asynchronous references (arefs): one-slot channels of a shared-memory
//! buffer plus *full*/*empty* mbarriers, rings of them, their CPU simulation and
//! their lowering to mbarrier PTX. Not written yet: the partitioner issue builds it.
