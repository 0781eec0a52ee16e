# ring.py - an mpi4py program with a known pattern (tests/app-mpi4py.sh):
# 100 x (Sendrecv of 8,000 bytes round a ring, tag 1; Barrier), one more
# Sendrecv with tag 2, then an Allreduce of one double.  Prints its rank and
# a checksum of what it received, the same under phantom record and replay.
import array
import os

from mpi4py import MPI

comm = MPI.COMM_WORLD
me, n = comm.Get_rank(), comm.Get_size()
send, recv = bytearray(8000), bytearray(8000)
check = 0


def exchange(tag):
    global check
    send[0] = (me + tag) % 256
    comm.Sendrecv(send, dest=(me + 1) % n, sendtag=tag, recvbuf=recv, source=(me - 1) % n, recvtag=tag)
    check = (check * 31 + recv[0]) % 1000003


for i in range(100):
    exchange(1)
    comm.Barrier()
exchange(2)
total = array.array('d', [0.0])
comm.Allreduce(array.array('d', [float(me)]), total, op=MPI.SUM)
# one write: mpirun forwards what each rank writes as it comes, and a line
# printed in pieces can be cut by another rank's
os.write(1, f"{me} {check} {total[0]}\n".encode())
