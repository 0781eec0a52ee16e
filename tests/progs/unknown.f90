! unknown.f90 - unknown.c through "use mpi": calls the recorder does not
! sequence, made from Fortran, whose bindings call PMPI_* directly: local
! queries (counted; MPI_Get_processor_name has a CHARACTER argument), then
! one-sided communication and calls with CHARACTER arguments (passed
! through, counted as unknown).  The program must run as without the
! recorder: the strings it sets it must read back.
program unknown_f
    use mpi
    implicit none
    integer :: me, np, i, ierr, win, info, one, from, namelen
    integer :: buf(4)
    integer(kind=MPI_ADDRESS_KIND) :: winsize, disp
    character(len=32) :: val
    character(len=MPI_MAX_OBJECT_NAME) :: tname
    character(len=MPI_MAX_PROCESSOR_NAME) :: host, hn
    logical :: found
    call MPI_Init(ierr)
    do i = 1, 3
        call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
    end do
    call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
    call MPI_Get_processor_name(host, namelen, ierr)
    call hostnm(hn)  ! gfortran's gethostname, as Open MPI's answer
    if (namelen < 1 .or. host(1:namelen) /= trim(hn)) print '(a)', 'FAIL: MPI_Get_processor_name gave "'//host(1:namelen)//'"'
    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, 'no_locks', 'true', ierr)
    call MPI_Info_get(info, 'no_locks', len(val), val, found, ierr)
    if (.not. found .or. val /= 'true') print '(a)', 'FAIL: MPI_Info_get read back "'//trim(val)//'"'
    buf = 0
    winsize = 16
    call MPI_Win_create(buf, winsize, 4, info, MPI_COMM_WORLD, win, ierr)
    call MPI_Info_free(info, ierr)
    call MPI_Win_set_name(win, 'phantom window', ierr)
    call MPI_Type_set_name(MPI_INTEGER, 'phantom integer', ierr)
    call MPI_Type_get_name(MPI_INTEGER, tname, namelen, ierr)
    if (tname(1:namelen) /= 'phantom integer') print '(a)', 'FAIL: MPI_Type_get_name read back "'//tname(1:namelen)//'"'
    call MPI_Win_fence(0, win, ierr)
    one = me + 1
    disp = mod(me, 4)
    call MPI_Put(one, 1, MPI_INTEGER, mod(me + 1, np), disp, 1, MPI_INTEGER, win, ierr)
    call MPI_Win_fence(0, win, ierr)
    call MPI_Win_free(win, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    from = mod(me + np - 1, np)
    print '(a,i0,a,i0,a,i0)', 'rank ', me, ' got ', buf(mod(from, 4) + 1), ' from rank ', from
    call MPI_Finalize(ierr)
end program unknown_f
