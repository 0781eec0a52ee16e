! fmodule.f90 - an MPI call inside a Fortran module procedure, whose
! symbol gfortran mangles (__halo_MOD_exchange): its call site must read
! halo::exchange, as in the source.  And one in an internal procedure
! (CONTAINS of the program), whose symbol is local (sync_all.0): its site
! must read sync_all.
module halo
    use mpi
    implicit none
contains
    subroutine exchange(me, n)
        integer, intent(in) :: me, n
        integer :: buf(4), ierr, right, left
        right = mod(me + 1, n)
        left = mod(me + n - 1, n)
        buf = me
        call MPI_Sendrecv_replace(buf, 4, MPI_INTEGER, right, 1, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        if (buf(1) /= left) then
            print '(a,i0,a,i0)', 'FAIL rank ', me, ': got ', buf(1)
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if
    end subroutine
end module halo

program fmodule
    use mpi
    use halo
    implicit none
    integer :: me, n, ierr
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
    call exchange(me, n)
    call sync_all(1)
    call sync_all(2)
    call MPI_Finalize(ierr)
contains
    ! large enough that -O1 keeps it a function of its own (one MPI call
    ! alone is inlined, and its site then is the inlined scope's)
    subroutine sync_all(times)
        integer, intent(in) :: times
        integer :: i, ierr2
        do i = 1, times
            call MPI_Barrier(MPI_COMM_WORLD, ierr2)
            if (ierr2 /= MPI_SUCCESS) then
                print '(a,i0,a,i0)', 'FAIL rank ', me, ': MPI_Barrier returned ', ierr2
                call MPI_Abort(MPI_COMM_WORLD, 1, ierr2)
            end if
        end do
    end subroutine
end program
