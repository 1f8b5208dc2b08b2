.gsh point c0
.proc main
    setemit 3
    end
.end
