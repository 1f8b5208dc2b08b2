.out - color o1.xy
.out - texcoord0 o1.yz
.proc main
    end
.end
