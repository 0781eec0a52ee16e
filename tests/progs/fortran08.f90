! fortran08.f90 - the Fortran 2008 bindings ("use mpi_f08"), for any number of ranks >= 2.
!
! Send/Recv ring, Isend/Irecv + Waitall, Waitany (1-based index, looped until
! MPI_UNDEFINED), a receive with MPI_STATUS_IGNORE, Allreduce with
! MPI_IN_PLACE, Bcast, Comm_split with traffic on the new communicator, and
! Sendrecv, then local group and topology calls, and two Bcasts of derived
! datatypes, the second made on the handle MPI_Type_free gave back.  The
! same program as fortran.f90 (which has "use mpi"), with the optional
! error arguments left out.
! The oracle module (oracle_f.f90, included here so that one compiler
! command builds the program) names every call by its C name.
include 'oracle_f.f90'

program fortran_mpi_f08
    use mpi_f08
    use oracle_f
    implicit none
    integer, parameter :: n = 100, recv_kind = 1, send_kind = 2
    integer :: me, np, left, right, i, idx, color, sme, snp, total
    type(MPI_Comm) :: sub
    type(MPI_Group) :: gsub, gworld, gmembers, gless
    type(MPI_Datatype) :: quad, pair, freed
    integer :: sbuf(n), v(10), b(50)
    integer, asynchronous :: rbuf(n), sb2(n, 4), rb2(n, 4)
    type(MPI_Status) :: st, sts(4)
    type(MPI_Request) :: reqs(4), pre(4)
    integer :: labels(4), kinds(4), next_label = 1
    integer, allocatable :: members(:)
    character(len=:), allocatable :: line, slabel
    character(len=18) :: pay1, pay2

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, me)
    call MPI_Comm_size(MPI_COMM_WORLD, np)
    call o_open(me)
    call o_line(op('MPI_Init')//'}')
    call o_commdef('world', [(i, i=0, np - 1)])
    if (np < 2) call o_fail('needs at least 2 ranks')
    right = mod(me + 1, np)
    left = mod(me + np - 1, np)

    ! 1. Ring, even ranks send first.
    call pat_fill(sbuf, n, me, 1)
    if (mod(me, 2) == 0) then
        call send(sbuf, n, right, 10)
        call recv(rbuf, n, left, 10, .true.)
    else
        call recv(rbuf, n, left, 10, .true.)
        call send(sbuf, n, right, 10)
    end if
    call pat_check(rbuf, n, left, 1, 'ring')

    ! 2. Both neighbours at once, completed by Waitall.
    call pat_fill(sb2(:, 1), n, me, 2)
    call pat_fill(sb2(:, 2), n, me, 3)
    call irecv(rb2(:, 1), n, left, 11, 1)
    call irecv(rb2(:, 2), n, right, 12, 2)
    call isend(sb2(:, 1), n, right, 11, 3)
    call isend(sb2(:, 2), n, left, 12, 4)
    pre = reqs
    call MPI_Waitall(4, reqs, sts)
    line = op('MPI_Waitall')//jraw('reqs', reqlist(pre))//',"statuses":['
    do i = 1, 4
        if (i > 1) line = line//','
        if (kinds(i) == recv_kind) then
            line = line//status_json(sts(i), 'world')
        else
            line = line//'null'
        end if
    end do
    ! (separate statements: the checksum follows completion order)
    pay1 = o_recv_ints(rb2(:, 1), n)
    pay2 = o_recv_ints(rb2(:, 2), n)
    line = line//'],"payloads":["'//pay1//'","'//pay2//'",null,null]}'
    call o_line(line)
    call pat_check(rb2(:, 1), n, left, 2, 'waitall from left')
    call pat_check(rb2(:, 2), n, right, 3, 'waitall from right')

    ! 3. Waitany until MPI_UNDEFINED; Fortran indices are 1-based, the trace's 0-based.
    call pat_fill(sb2(:, 3), n, me, 4)
    call pat_fill(sb2(:, 4), n, me, 5)
    call irecv(rb2(:, 1), n, left, 20, 1)
    call irecv(rb2(:, 2), n, left, 21, 2)
    call isend(sb2(:, 3), n, right, 20, 3)
    call isend(sb2(:, 4), n, right, 21, 4)
    total = 0
    do
        pre = reqs
        call MPI_Waitany(4, reqs, idx, st)
        line = op('MPI_Waitany')//jraw('reqs', reqlist(pre))
        if (idx == MPI_UNDEFINED) then
            call o_line(line//ji('index', -32766)//'}')
            exit
        end if
        total = total + 1
        line = line//ji('index', idx - 1)
        if (kinds(idx) == recv_kind) then
            line = line//jraw('status', status_json(st, 'world'))// &
                   ',"payloads":["'//o_recv_ints(rb2(:, idx), n)//'"]'
            if (st%MPI_TAG /= 19 + idx) call o_fail('waitany tag')
        end if
        call o_line(line//'}')
    end do
    if (total /= 4) call o_fail('waitany completed '//itoa(total)//' requests')
    call pat_check(rb2(:, 1), n, left, 4, 'waitany 1')
    call pat_check(rb2(:, 2), n, left, 5, 'waitany 2')

    ! 4. A receive with MPI_STATUS_IGNORE.
    call pat_fill(sbuf, n, me, 6)
    if (mod(me, 2) == 0) then
        call send(sbuf, n, left, 30)
        call recv(rbuf, n, right, 30, .false.)
    else
        call recv(rbuf, n, right, 30, .false.)
        call send(sbuf, n, left, 30)
    end if
    call pat_check(rbuf, n, right, 6, 'status ignore')

    ! 5. Allreduce in place.
    v = [(me + i, i=1, 10)]
    call MPI_Allreduce(MPI_IN_PLACE, v, 10, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call o_line(op('MPI_Allreduce')//ji('count', 10)//ji('bytes', 40)//js('comm', 'world') &
                //js('payload_fnv', o_recv_ints(v, 10))//'}')
    do i = 1, 10
        if (v(i) /= np*(np - 1)/2 + np*i) call o_fail('allreduce in place')
    end do

    ! 6. Bcast from the last rank.
    if (me == np - 1) call pat_fill(b, 50, me, 7)
    call MPI_Bcast(b, 50, MPI_INTEGER, np - 1, MPI_COMM_WORLD)
    line = op('MPI_Bcast')//ji('root', np - 1)//ji('count', 50)//ji('bytes', 200)//js('comm', 'world')
    if (me /= np - 1) line = line//js('payload_fnv', o_recv_ints(b, 50))
    call o_line(line//'}')
    call pat_check(b, 50, np - 1, 7, 'bcast')

    ! 7. Even / odd halves: Allreduce and a ring inside.
    color = mod(me, 2)
    slabel = merge('odd ', 'even', color == 1)
    slabel = trim(slabel)
    members = [(i, i=color, np - 1, 2)]
    call MPI_Comm_split(MPI_COMM_WORLD, color, me, sub)
    call o_commdef(slabel, members)
    call o_line(op('MPI_Comm_split')//js('comm', 'world')//ji('ival', color)//js('newcomm', slabel)//'}')
    call MPI_Comm_rank(sub, sme)
    call MPI_Comm_size(sub, snp)
    v(1) = me
    call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, sub)
    call o_line(op('MPI_Allreduce')//ji('count', 1)//ji('bytes', 4)//js('comm', slabel) &
                //js('payload_fnv', o_recv_ints(v, 1))//'}')
    if (v(1) /= sum(members)) call o_fail('split allreduce')
    call pat_fill(sbuf, n, me, 8)
    call sendrecv(sbuf, mod(sme + 1, snp), rbuf, mod(sme + snp - 1, snp), 40, sub, slabel, members)
    call pat_check(rbuf, n, members(mod(sme + snp - 1, snp) + 1), 8, 'split ring')

    ! 8. Sendrecv on world.
    call pat_fill(sbuf, n, me, 9)
    call sendrecv(sbuf, right, rbuf, left, 41, MPI_COMM_WORLD, 'world', [(i, i=0, np - 1)])
    call pat_check(rbuf, n, left, 9, 'sendrecv')

    ! 9. Local calls on it, which a replay answers from the recorded run.
    call MPI_Topo_test(sub, i)
    if (i /= MPI_UNDEFINED) call o_fail('Topo_test of a split communicator')
    call MPI_Comm_group(sub, gsub)
    call MPI_Comm_group(MPI_COMM_WORLD, gworld)
    call MPI_Group_incl(gworld, size(members), members, gmembers)
    call MPI_Group_compare(gsub, gmembers, i)
    if (i /= MPI_IDENT) call o_fail('Group_compare of the split group and its members')
    call MPI_Group_range_excl(gworld, 1, reshape([0, np - 1, 2], [3, 1]), gless)
    call MPI_Group_size(gless, i)
    if (i /= np / 2) call o_fail('Group_range_excl of the even ranks')
    call MPI_Group_free(gless)
    call MPI_Group_free(gmembers)
    call MPI_Group_free(gworld)
    call MPI_Group_free(gsub)

    call o_line(op('MPI_Comm_free')//js('comm', slabel)//'}')
    call MPI_Comm_free(sub)

    ! 10. A datatype of 4 integers, freed, then one of 2 on the same handle
    ! (Open MPI hands freed handles out again): the trace must give the
    ! second its own size, 8 bytes an element, and log 40 bytes, not 80.
    call MPI_Type_contiguous(4, MPI_INTEGER, quad)
    call MPI_Type_commit(quad)
    call typed_bcast(quad, 4)
    freed = quad
    call MPI_Type_free(quad)
    call MPI_Type_contiguous(2, MPI_INTEGER, pair)
    call MPI_Type_commit(pair)
    if (pair%MPI_VAL /= freed%MPI_VAL) &
        call o_fail('the new datatype did not get the freed handle: section 10 tests nothing')
    call typed_bcast(pair, 2)
    call MPI_Type_free(pair)

    print '(a,i0,a,a)', 'rank ', me, ' checksum ', o_checksum_hex()
    call o_line(op('MPI_Finalize')//'}')
    call o_close()
    call MPI_Finalize()

contains

    ! Bcast of 5 elements of dtype (width integers each) from rank 0.
    subroutine typed_bcast(dtype, width)
        type(MPI_Datatype), intent(in) :: dtype
        integer, intent(in) :: width
        if (me == 0) call pat_fill(b, 5*width, me, 10 + width)
        call MPI_Bcast(b, 5, dtype, 0, MPI_COMM_WORLD)
        line = op('MPI_Bcast')//ji('root', 0)//ji('count', 5)//ji('bytes', 20*width)//js('comm', 'world')
        if (me /= 0) line = line//js('payload_fnv', o_recv_ints(b, 5*width))
        call o_line(line//'}')
        call pat_check(b, 5*width, 0, 10 + width, 'typed bcast')
    end subroutine

    subroutine send(buf, count, dest, tag)
        integer, intent(in) :: buf(*), count, dest, tag
        call MPI_Send(buf, count, MPI_INTEGER, dest, tag, MPI_COMM_WORLD)
        call o_line(op('MPI_Send')//p2p(dest, dest, tag, count, 4*count, 'world')//'}')
    end subroutine

    subroutine recv(buf, count, src, tag, with_status)
        integer, intent(inout) :: buf(*)
        integer, intent(in) :: count, src, tag
        logical, intent(in) :: with_status
        type(MPI_Status) :: s
        if (with_status) then
            call MPI_Recv(buf, count, MPI_INTEGER, src, tag, MPI_COMM_WORLD, s)
            call o_line(op('MPI_Recv')//p2p(src, src, tag, count, 4*count, 'world') &
                        //jraw('status', status_json(s, 'world')) &
                        //js('payload_fnv', o_recv_ints(buf(1:count), count))//'}')
        else
            call MPI_Recv(buf, count, MPI_INTEGER, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
            call o_line(op('MPI_Recv')//p2p(src, src, tag, count, 4*count, 'world') &
                        //js('payload_fnv', o_recv_ints(buf(1:count), count))//'}')
        end if
    end subroutine

    subroutine isend(buf, count, dest, tag, slot)
        integer, asynchronous, intent(in) :: buf(*)
        integer, intent(in) :: count, dest, tag, slot
        call MPI_Isend(buf, count, MPI_INTEGER, dest, tag, MPI_COMM_WORLD, reqs(slot))
        call new_label(slot, send_kind)
        call o_line(op('MPI_Isend')//p2p(dest, dest, tag, count, 4*count, 'world') &
                    //',"newreq":true'//js('reqlabel', 'r'//itoa(labels(slot)))//'}')
    end subroutine

    subroutine irecv(buf, count, src, tag, slot)
        integer, asynchronous :: buf(*)
        integer, intent(in) :: count, src, tag, slot
        call MPI_Irecv(buf, count, MPI_INTEGER, src, tag, MPI_COMM_WORLD, reqs(slot))
        call new_label(slot, recv_kind)
        call o_line(op('MPI_Irecv')//p2p(src, src, tag, count, 4*count, 'world') &
                    //',"newreq":true'//js('reqlabel', 'r'//itoa(labels(slot)))//'}')
    end subroutine

    subroutine new_label(slot, kind)
        integer, intent(in) :: slot, kind
        labels(slot) = next_label
        kinds(slot) = kind
        next_label = next_label + 1
    end subroutine

    ! The requests as labels, null where the handle was MPI_REQUEST_NULL before the call.
    function reqlist(h) result(s)
        type(MPI_Request), intent(in) :: h(:)
        character(len=:), allocatable :: s
        integer :: k
        s = '['
        do k = 1, size(h)
            if (k > 1) s = s//','
            if (h(k) == MPI_REQUEST_NULL) then
                s = s//'null'
            else
                s = s//'"r'//itoa(labels(k))//'"'
            end if
        end do
        s = s//']'
    end function

    ! Status of a receive on a communicator whose members (world ranks) are known.
    function status_json(s, comm) result(j)
        type(MPI_Status), intent(in) :: s
        character(len=*), intent(in) :: comm
        character(len=:), allocatable :: j
        integer :: nb
        call MPI_Get_count(s, MPI_BYTE, nb)
        if (comm /= 'world') call o_fail('status_json: world only')
        j = jstatus(s%MPI_SOURCE, s%MPI_SOURCE, s%MPI_TAG, nb)
    end function

    subroutine sendrecv(sb, dest, rb, src, tag, comm, label, mem)
        integer, intent(in) :: sb(*), dest, src, tag, mem(:)
        type(MPI_Comm), intent(in) :: comm
        integer, intent(inout) :: rb(*)
        character(len=*), intent(in) :: label
        type(MPI_Status) :: s
        integer :: nb
        call MPI_Sendrecv(sb, n, MPI_INTEGER, dest, tag, rb, n, MPI_INTEGER, src, tag, comm, s)
        call MPI_Get_count(s, MPI_BYTE, nb)
        call o_line(op('MPI_Sendrecv')//p2p(dest, mem(dest + 1), tag, n, 4*n, label) &
                    //ji('rpeer', src)//ji('rpeer_world', mem(src + 1))//ji('rtag', tag) &
                    //ji('rcount', n)//ji('rbytes', 4*n) &
                    //jraw('status', jstatus(s%MPI_SOURCE, mem(s%MPI_SOURCE + 1), s%MPI_TAG, nb)) &
                    //js('payload_fnv', o_recv_ints(rb(1:n), n))//'}')
    end subroutine

end program fortran_mpi_f08
