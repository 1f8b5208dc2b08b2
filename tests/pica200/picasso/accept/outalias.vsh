; output given by alias; float expressions read as picasso reads them
.constf eighth(1.0/128.0, 2.5e-1, -0.0, 3.0*2.0)
.constf odd(  7  , .5, 1., -.25 )
.out outPos position
.out outTc texcoord0 o2.xy
.out - texcoord0w outTc.p
.out - view o3.xyz
.out outQ normalquat o4
.out - color
.proc main
    mov outPos, eighth
    mov outTc.xy, odd
    mov outQ, odd.wzyx
    end
.end
