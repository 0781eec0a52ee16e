! wtime08.f90 - control flow on the clock through the Fortran 2008 bindings:
! each rank sends to MPI_PROC_NULL until its own MPI_Wtime says 5 ms have
! passed, so a replay makes the recorded calls only if mpi_f08's MPI_Wtime
! (the C symbol MPI_Wtime, bound from the module) is answered from the log;
! then for 3 ms more by SYSTEM_CLOCK (libgfortran's clock_gettime).
! Prints "rank R checksum N", N the number of sends.
program wtime08
    use mpi_f08
    implicit none
    integer :: me, sends, x
    integer(kind=8) :: c0, c, rate
    double precision :: t0
    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, me)
    sends = 0
    x = 0
    t0 = MPI_Wtime()
    do while (MPI_Wtime() - t0 < 0.005d0)
        call MPI_Send(x, 1, MPI_INTEGER, MPI_PROC_NULL, 1, MPI_COMM_WORLD)
        sends = sends + 1
    end do
    call system_clock(c0, rate)
    c = c0
    do while (c - c0 < 3 * rate / 1000)
        call MPI_Send(x, 1, MPI_INTEGER, MPI_PROC_NULL, 2, MPI_COMM_WORLD)
        sends = sends + 1
        call system_clock(c)
    end do
    print '(a,i0,a,i0)', 'rank ', me, ' checksum ', sends
    call MPI_Finalize()
end program wtime08
