! oracle_f.f90 - the Fortran test programs' oracle writer (see oracle.h for the C one).
!
! Independent of the MPI module, so that fortran.f90 (use mpi) and
! fortran08.f90 (use mpi_f08) share it: the programs pass plain integers.
! Each program INCLUDEs this file, so it is built with a single command:
!   mpif90 -O2 -I tests/progs -J $BUILD -o $BUILD/fortran tests/progs/fortran.f90
! It writes $PH_EXPECT/expect-<rank>.jsonl, one JSON object per line, builds
! the JSON fragments, fills and checks the payload pattern (the same as
! pat_byte in oracle.h), and keeps the FNV-1a 64 checksum of received bytes.
!
! FNV-1a 64 is computed on two 32-bit halves held in int64, so that no
! arithmetic overflows: prime = 2**40 + 435.
module oracle_f
    use, intrinsic :: iso_fortran_env, only: int8, int64, output_unit
    use, intrinsic :: iso_c_binding, only: c_char, c_int, c_null_char
    implicit none
    private
    public :: o_open, o_line, o_close, o_fail, op, ji, js, jnull, jraw, p2p, jstatus, &
              itoa, o_recv_ints, o_checksum_hex, pat_fill, pat_check, o_commdef, jlist

    integer :: ounit = 0, myrank = -1
    logical :: enabled = .false.
    integer(int64), parameter :: mask32 = int(z'FFFFFFFF', int64), mask24 = int(z'FFFFFF', int64)
    integer(int64), parameter :: off_hi = int(z'CBF29CE4', int64), off_lo = int(z'84222325', int64)
    integer(int64) :: sum_hi = off_hi, sum_lo = off_lo

    interface
        function c_mkdir(path, mode) bind(C, name="mkdir") result(r)
            import :: c_char, c_int
            character(kind=c_char), intent(in) :: path(*)
            integer(c_int), value :: mode
            integer(c_int) :: r
        end function
    end interface

contains

    subroutine o_fail(msg)
        character(len=*), intent(in) :: msg
        write (output_unit, '(a,i0,a,a)') 'FAIL rank ', myrank, ': ', msg
        flush (output_unit)
        error stop 1
    end subroutine

    subroutine o_open(rank)
        integer, intent(in) :: rank
        character(len=4096) :: dir
        integer :: n, st, ios, k
        myrank = rank
        call get_environment_variable('PH_EXPECT', dir, n, st)
        if (st /= 0 .or. n == 0) return
        do k = 2, n + 1 ! mkdir -p; existing directories are fine
            if (k <= n) then
                if (dir(k:k) /= '/') cycle
            end if
            if (c_mkdir(dir(1:k - 1)//c_null_char, int(o'777', c_int)) /= 0) continue
        end do
        open (newunit=ounit, file=trim(dir)//'/expect-'//itoa(rank)//'.jsonl', &
              status='replace', action='write', iostat=ios)
        if (ios /= 0) call o_fail('cannot create the oracle file in '//trim(dir))
        enabled = .true.
    end subroutine

    subroutine o_line(s)
        character(len=*), intent(in) :: s
        if (enabled) write (ounit, '(a)') s
    end subroutine

    subroutine o_close()
        if (enabled) close (ounit)
        enabled = .false.
    end subroutine

    ! ---- JSON fragments -------------------------------------------------------
    function itoa(i) result(s)
        integer, intent(in) :: i
        character(len=:), allocatable :: s
        character(len=24) :: b
        write (b, '(i0)') i
        s = trim(b)
    end function

    function op(name) result(s)
        character(len=*), intent(in) :: name
        character(len=:), allocatable :: s
        s = '{"op":"'//name//'"'
    end function

    function ji(key, v) result(s)
        character(len=*), intent(in) :: key
        integer, intent(in) :: v
        character(len=:), allocatable :: s
        s = ',"'//key//'":'//itoa(v)
    end function

    function js(key, v) result(s)
        character(len=*), intent(in) :: key, v
        character(len=:), allocatable :: s
        s = ',"'//key//'":"'//v//'"'
    end function

    function jnull(key) result(s)
        character(len=*), intent(in) :: key
        character(len=:), allocatable :: s
        s = ',"'//key//'":null'
    end function

    function jraw(key, v) result(s)
        character(len=*), intent(in) :: key, v
        character(len=:), allocatable :: s
        s = ',"'//key//'":'//v
    end function

    ! JSON list of integers.
    function jlist(v) result(s)
        integer, intent(in) :: v(:)
        character(len=:), allocatable :: s
        integer :: i
        s = '['
        do i = 1, size(v)
            if (i > 1) s = s//','
            s = s//itoa(v(i))
        end do
        s = s//']'
    end function

    ! peer, peer_world (omitted for special ranks), tag, count, bytes, comm.
    function p2p(peer, peer_world, tag, count, bytes, comm) result(s)
        integer, intent(in) :: peer, peer_world, tag, count, bytes
        character(len=*), intent(in) :: comm
        character(len=:), allocatable :: s
        s = ji('peer', peer)
        if (peer >= 0) s = s//ji('peer_world', peer_world)
        s = s//ji('tag', tag)//ji('count', count)//ji('bytes', bytes)//js('comm', comm)
    end function

    function jstatus(source, source_world, tag, bytes) result(s)
        integer, intent(in) :: source, source_world, tag, bytes
        character(len=:), allocatable :: s
        s = '{"source":'//itoa(source)
        if (source >= 0) s = s//',"source_world":'//itoa(source_world)
        s = s//',"tag":'//itoa(tag)//',"bytes":'//itoa(bytes)//'}'
    end function

    subroutine o_commdef(label, members)
        character(len=*), intent(in) :: label
        integer, intent(in) :: members(:)
        call o_line('{"comm_def":"'//label//'","members":'//jlist(members)//'}')
    end subroutine

    ! ---- FNV-1a 64 ---------------------------------------------------------------
    subroutine fnv_step(hi, lo, byte)
        integer(int64), intent(inout) :: hi, lo
        integer(int64), intent(in) :: byte
        integer(int64) :: t, l
        l = ieor(lo, byte)
        t = l*435_int64
        lo = iand(t, mask32)
        hi = iand(hi*435_int64 + shiftr(t, 32) + shiftl(iand(l, mask24), 8), mask32)
    end subroutine

    function hex(hi, lo) result(s)
        integer(int64), intent(in) :: hi, lo
        character(len=18) :: s
        character(len=16), parameter :: digits = '0123456789abcdef'
        integer :: k
        integer(int64) :: v
        s = '0x'
        do k = 0, 7
            v = iand(shiftr(hi, 28 - 4*k), 15_int64)
            s(3 + k:3 + k) = digits(v + 1:v + 1)
            v = iand(shiftr(lo, 28 - 4*k), 15_int64)
            s(11 + k:11 + k) = digits(v + 1:v + 1)
        end do
    end function

    ! FNV of the bytes of buf(1:n) as "0x..."; folds them into the checksum.
    function o_recv_ints(buf, n) result(s)
        integer, intent(in) :: buf(:), n
        character(len=18) :: s
        integer(int8), allocatable :: b(:)
        integer(int64) :: hi, lo, x
        integer :: i
        hi = off_hi
        lo = off_lo
        allocate (b(storage_size(buf)/8*n))
        b(:) = transfer(buf(1:n), 0_int8, size(b))
        do i = 1, size(b)
            x = iand(int(b(i), int64), 255_int64)
            call fnv_step(hi, lo, x)
            call fnv_step(sum_hi, sum_lo, x)
        end do
        s = hex(hi, lo)
    end function

    function o_checksum_hex() result(s)
        character(len=18) :: s
        s = hex(sum_hi, sum_lo)
    end function

    ! ---- payload pattern: byte i (0-based) of message seq from sender ------------
    integer function pat_byte(sender, seq, i)
        integer, intent(in) :: sender, seq, i
        pat_byte = modulo(sender*151 + seq*53 + i*7 + (i/256)*29, 256)
    end function

    subroutine pat_fill(buf, n, sender, seq)
        integer, intent(out) :: buf(:)
        integer, intent(in) :: n, sender, seq
        integer(int8), allocatable :: b(:)
        integer :: i, nb
        nb = storage_size(buf)/8*n
        allocate (b(nb))
        do i = 1, nb
            b(i) = int(pat_byte(sender, seq, i - 1) - merge(256, 0, pat_byte(sender, seq, i - 1) > 127), int8)
        end do
        buf(1:n) = transfer(b, buf(1), n)
    end subroutine

    subroutine pat_check(buf, n, sender, seq, what)
        integer, intent(in) :: buf(:), n, sender, seq
        character(len=*), intent(in) :: what
        integer(int8), allocatable :: b(:)
        integer :: i
        allocate (b(storage_size(buf)/8*n))
        b(:) = transfer(buf(1:n), 0_int8, size(b))
        do i = 1, size(b)
            if (iand(int(b(i)), 255) /= pat_byte(sender, seq, i - 1)) &
                call o_fail(what//': byte '//itoa(i - 1)//' differs (sender '//itoa(sender) &
                            //', seq '//itoa(seq)//')')
        end do
    end subroutine

end module oracle_f
