.out - color.xy o1
.proc main
    end
.end
