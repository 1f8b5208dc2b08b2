mov r0, r1
end
