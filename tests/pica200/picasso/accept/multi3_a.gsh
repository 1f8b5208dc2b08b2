; with multi3_b.vsh: a geometry shader followed by a vertex shader; the
; shared code holds SETEMIT, which must not make the vertex DVLE a geometry
; one when gpurc's disassembly is reassembled
.gsh
.fvec u
.out pos position
.entry gmain
.proc gmain
    mov pos, u
    setemit 0, prim
    emit
    end
.end
