.gsh fixed c8 c10 3
.proc main
    end
.end
