//! Pipeliner: aref depth, MMA pipelining, software pipelining (modulo
//! scheduling), cooperative and persistent schedules. Not written yet: the
//! pipeliner issue builds it.
