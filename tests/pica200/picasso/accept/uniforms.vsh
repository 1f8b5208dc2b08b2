; uniform tables: arrays, hidden uniforms, every register file
.fvec projection[4], modelView[4]
.fvec _hidden[2]
.fvec lightVec
.ivec loopCfg
.ivec _hiddenI, other
.bool flagA, flagB[3]
.bool _flagHidden
.constf half(0.5, 0.5, 0.5, 0.5)
.consti counts(3, 0, 1, 0)
.constfa table[4]
.constfa (1.0, 2.0, 3.0, 4.0)
.constfa (-1.5, 0.25, 1e10, -1e-30)
.end
.setf c40(0.1, 0.2, 0.3, 0.4)
.seti i3(255, -1, 7, 300)
.setb b9 true
.setb b10 off
.in inPos
.in inNorm v5
.in inCol
.out outPos position
.out outCol color
.out outTc texcoord0.xy
.out - texcoord1.zw
.proc main
    dp4 outPos.x, projection[0], inPos
    dp4 outPos.y, projection[1], inPos
    dp4 outPos.z, projection[2], inPos
    dp4 outPos.w, projection[3], inPos
    mul r0, half, inNorm
    mov outCol, lightVec
    mov outTc, table[1]
    for counts
        add r0, table[aL], r0
    .end
    ifu flagA
        mov r1, c40
    .end
    end
.end
